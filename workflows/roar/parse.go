package roar

import (
	"slices"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// ParseOrderings reads a comma-separated list of orderings (Orderings),
// as vi roar's --ordering gives it; a repeated, an unknown and no ordering
// are usage errors.
func ParseOrderings(s string) ([]string, error) {
	var out []string
	for _, o := range strings.Split(s, ",") {
		o = strings.ToLower(strings.TrimSpace(o))
		if o == "" {
			continue
		}
		if !slices.Contains(Orderings, o) {
			return nil, framework.Usagef("unknown --ordering %q (want %s)", o, strings.Join(Orderings, ", "))
		}
		if slices.Contains(out, o) {
			return nil, framework.Usagef("--ordering: %q given twice", o)
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, framework.Usagef("--ordering is empty (want %s)", strings.Join(Orderings, ", "))
	}
	return out, nil
}

// ParseFractions reads a comma-separated list of fractions of features to
// remove, each in (0, 1], as vi roar's --fractions gives it.
func ParseFractions(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0 && v <= 1) {
			return nil, framework.Usagef("--fractions: %q is not a fraction in (0, 1]", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, framework.Usagef("--fractions is empty")
	}
	return out, nil
}

// DefaultMeasure is the measure of a ROAR run on task t when none is
// given: accuracy for classification, the measure of the ROAR benchmark
// (Hooker et al.), whose curves read as the share of rows a model still
// gets right; the task's default (mse) for regression.
func DefaultMeasure(t framework.Task) string {
	if t == framework.Binary || t == framework.Multiclass {
		return "accuracy"
	}
	return t.DefaultMeasure()
}
