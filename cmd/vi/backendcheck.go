package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// checkMeasureFits reports, before any model is trained, a measure that
// does not fit the response's task. An unknown target is left to Prepare.
func checkMeasureFits(d *dataio.Dataset, target string, task *framework.Task, m framework.Measure) error {
	t, col, ok := responseTask(d, target, task)
	if !ok || m == nil || m.Supports(t) {
		return nil
	}
	var fit []string
	for _, name := range framework.Measures() {
		if mm, err := framework.LookupMeasure(name); err == nil && mm.Supports(t) {
			fit = append(fit, name)
		}
	}
	kind := "real-valued"
	switch t {
	case framework.Binary:
		kind = "0/1"
	case framework.Multiclass:
		kind = "class-label"
	}
	return &dataio.InputError{File: d.Source, Column: col,
		Msg: fmt.Sprintf("measure %s does not fit the %s response (task %s; measures for it: %s)",
			m.Name(), kind, t, strings.Join(fit, ", "))}
}

// responseTask returns the task of the response column (forced or
// inferred) and its name; ok is false when the target is not in d.
func responseTask(d *dataio.Dataset, target string, task *framework.Task) (framework.Task, string, bool) {
	j := len(d.Names) - 1
	if target != "" {
		var err error
		if j, err = d.Column(target); err != nil {
			return 0, "", false
		}
	}
	if task != nil {
		return *task, d.Names[j], true
	}
	return pipeline.InferTask(mat.Col(nil, j, d.X)), d.Names[j], true
}

// checkBackend reports usage errors that the backend's description reveals
// before the full model is trained: unknown options, a binary response for a
// backend without classification, lazy without gradients.
func checkBackend(name string, b framework.Backend, d *dataio.Dataset, target string, task *framework.Task, ests []framework.Estimator, opts map[string]string) error {
	if known := b.Options(); len(known) > 0 {
		var names []string
		for _, o := range known {
			names = append(names, o.Name)
		}
		keys := make([]string, 0, len(opts))
		for k := range opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !slices.Contains(names, k) {
				return framework.Usagef("backend %s has no option %q (options: %s; see 'vi backends')", name, k, strings.Join(names, ", "))
			}
		}
	}
	caps := b.Capabilities()
	if t, _, ok := responseTask(d, target, task); ok && t == framework.Binary && !caps.Classification {
		return framework.Usagef("backend %s does not do binary classification (the response of %s is 0/1; --task regression treats it as a number)", name, d.Source)
	}
	if t, _, ok := responseTask(d, target, task); ok && t == framework.Multiclass && !caps.Multiclass {
		return framework.Usagef("backend %s does not do multiclass classification (the response of %s is class labels 0..K-1; --task regression treats it as a number)", name, d.Source)
	}
	_, lacking := fitsList(ests, caps)
	if len(lacking) > 0 {
		var need []string
		for _, e := range ests {
			if lacking[e.Name()] != nil {
				need = append(need, e.Name())
			}
		}
		var fit []string
		for _, name := range framework.Estimators() {
			if e, err := framework.LookupEstimator(name); err == nil {
				if ok, _ := caps.Runs(e); ok {
					fit = append(fit, name)
				}
			}
		}
		verb := "needs"
		if len(need) > 1 {
			verb = "need"
		}
		return framework.Usagef("estimator %s %s a backend with %s; backend %s has none (it supports --estimators %s; see 'vi backends')",
			strings.Join(need, ", "), verb, lackingWhat(need, lacking), name, strings.Join(fit, ","))
	}
	return nil
}

// lackingWhat says what the estimators need lack: "gradients" when they all
// lack the same, else "gradients (lazy) or warm starts (lazy-es)".
func lackingWhat(need []string, lacking map[string][]string) string {
	var whats []string
	by := map[string][]string{}
	for _, e := range need {
		w := strings.Join(lacking[e], " and ")
		if by[w] == nil {
			whats = append(whats, w)
		}
		by[w] = append(by[w], e)
	}
	if len(whats) == 1 {
		return whats[0]
	}
	parts := make([]string, len(whats))
	for i, w := range whats {
		parts[i] = fmt.Sprintf("%s (%s)", w, strings.Join(by[w], ", "))
	}
	return strings.Join(parts, " or ")
}

// fittingEstimators drops from the default estimators those that the
// backend cannot run, and returns a note saying so.
func fittingEstimators(name string, caps framework.Capabilities, ests []framework.Estimator) ([]framework.Estimator, string) {
	out, lacking := fitsList(ests, caps)
	if len(lacking) == 0 || len(out) == 0 {
		return ests, ""
	}
	var dropped, what []string
	for _, e := range ests {
		for _, w := range lacking[e.Name()] {
			if !slices.Contains(what, w) {
				what = append(what, w)
			}
		}
		if lacking[e.Name()] != nil {
			dropped = append(dropped, e.Name())
		}
	}
	return out, fmt.Sprintf("vi: backend %s has no %s: estimating with %s (not %s)",
		name, strings.Join(what, " or "), strings.Join(estimatorNames(out), ", "), strings.Join(dropped, ", "))
}
