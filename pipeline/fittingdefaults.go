package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// FittingDefaults is FittingEstimators for a default list headed by the
// estimator named first, whose table answers "what matters?": where the
// backend cannot run first (a model without parameter gradients), ref
// takes its place at the head of the list if the backend runs it, and the
// note says so, naming ref as a model trained without each feature.
func FittingDefaults(name string, caps framework.Capabilities, ests []framework.Estimator, first string, ref framework.Estimator) ([]framework.Estimator, string) {
	out, note := FittingEstimators(name, caps, ests)
	isFirst := func(e framework.Estimator) bool { return e.Name() == first }
	if note == "" || slices.ContainsFunc(out, isFirst) {
		return out, note
	}
	if ok, _ := caps.Runs(ref); !ok {
		return out, note
	}
	out = append([]framework.Estimator{ref}, out...)
	_, lacking := runnable(ests, caps)
	return out, fmt.Sprintf("backend %s has no %s: estimating with %s (%s in %s's place: a model trained without each feature)",
		name, strings.Join(lacking[first], " or "), strings.Join(EstimatorNames(out), ", "), ref.Name(), first)
}
