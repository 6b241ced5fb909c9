package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// LookupEstimators resolves a comma-separated list of registered
// estimator names ("lazy,dropout,retrain"), in its order. A name given
// twice, an unknown name and an empty list are usage errors, worded as
// vi's --estimators.
func LookupEstimators(list string) ([]framework.Estimator, error) {
	var out []framework.Estimator
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if seen[name] {
			return nil, framework.Usagef("--estimators: %q given twice", name)
		}
		seen[name] = true
		e, err := framework.LookupEstimator(name)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, framework.Usagef("--estimators is empty (registered: %s)", strings.Join(framework.Estimators(), ", "))
	}
	return out, nil
}

// ConfigureEstimators applies settings (a setting's name to its value) to
// the estimators that have them (framework.Configure); an error names the
// setting as vi's flag of that name.
func ConfigureEstimators(ests []framework.Estimator, settings map[string]string) ([]framework.Estimator, error) {
	out := make([]framework.Estimator, len(ests))
	for i, e := range ests {
		c, err := framework.Configure(e, settings)
		if err != nil {
			return nil, fmt.Errorf("--%w", err)
		}
		out[i] = c
	}
	return out, nil
}

// EstimatorNames returns the estimators' names, in order.
func EstimatorNames(ests []framework.Estimator) []string {
	out := make([]string, len(ests))
	for i, e := range ests {
		out[i] = e.Name()
	}
	return out
}

// runnable returns the estimators among ests that run on a backend with
// caps, and what each of the others lacks (framework.Capabilities.Runs).
func runnable(ests []framework.Estimator, caps framework.Capabilities) (fit []framework.Estimator, lacking map[string][]string) {
	lacking = map[string][]string{}
	for _, e := range ests {
		if ok, missing := caps.Runs(e); ok {
			fit = append(fit, e)
		} else {
			lacking[e.Name()] = missing
		}
	}
	return fit, lacking
}

// lackingNames returns, in the order of ests, the names of those lacking
// lists (runnable's) and what they lack, each once.
func lackingNames(ests []framework.Estimator, lacking map[string][]string) (names, what []string) {
	for _, e := range ests {
		missing, ok := lacking[e.Name()]
		if !ok {
			continue
		}
		names = append(names, e.Name())
		for _, w := range missing {
			if !slices.Contains(what, w) {
				what = append(what, w)
			}
		}
	}
	return names, what
}

// RunnableEstimators returns the names of the registered estimators that
// run on a backend with caps, in name order.
func RunnableEstimators(caps framework.Capabilities) []string {
	var out []string
	for _, name := range framework.Estimators() {
		if e, err := framework.LookupEstimator(name); err == nil {
			if ok, _ := caps.Runs(e); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// EstimatorsNeeding returns the names of the registered estimators that
// need the capability c (one capability set in it): those that run with
// it and not without any, in name order.
func EstimatorsNeeding(c framework.Capabilities) []string {
	var out []string
	for _, name := range framework.Estimators() {
		e, err := framework.LookupEstimator(name)
		if err != nil {
			continue
		}
		if ok, _ := (framework.Capabilities{}).Runs(e); ok {
			continue // needs nothing
		}
		if ok, _ := c.Runs(e); ok {
			out = append(out, name)
		}
	}
	return out
}
