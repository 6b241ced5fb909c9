package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// FittingDefaults is FittingEstimators for a default list that leads with
// the estimator named lead, whose table answers "what matters?": where the
// backend cannot run the lead (a model without parameter gradients), ref
// takes its place at the head of the list if the backend runs it, and the
// note says so, naming ref as a model trained without each feature.
func FittingDefaults(name string, caps framework.Capabilities, ests []framework.Estimator, lead string, ref framework.Estimator) ([]framework.Estimator, string) {
	out, note := FittingEstimators(name, caps, ests)
	isLead := func(e framework.Estimator) bool { return e.Name() == lead }
	if note == "" || slices.ContainsFunc(out, isLead) {
		return out, note
	}
	if ok, _ := caps.Runs(ref); !ok {
		return out, note
	}
	out = append([]framework.Estimator{ref}, out...)
	_, lacking := runnable(ests, caps)
	return out, fmt.Sprintf("backend %s has no %s: estimating with %s (%s in %s's place: a model trained without each feature)",
		name, strings.Join(lacking[lead], " or "), strings.Join(EstimatorNames(out), ", "), ref.Name(), lead)
}
