package pipeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// CheckMeasure reports, before any model is trained, a measure that does
// not fit the task of d's response (target, or the last column; task, or
// inferred): an input error naming the column and the measures that fit.
// An unknown target and a nil measure pass (Prepare reports the one, the
// task's default measure fits).
func CheckMeasure(d *dataio.Dataset, target string, task *framework.Task, m framework.Measure) error {
	t, col, ok := ResponseTask(d, target, task)
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

// ResponseTask returns the task of d's response column (target, or the
// last column) and its name: task when given, else inferred (InferTask);
// ok is false when the target is not in d.
func ResponseTask(d *dataio.Dataset, target string, task *framework.Task) (framework.Task, string, bool) {
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
	return InferTask(mat.Col(nil, j, d.X)), d.Names[j], true
}

// CheckBackend reports the usage errors that backend b's description
// (its Options and Capabilities) reveals before the full model is trained:
// an option in opts it does not have, a 0/1 or class-label response of d
// (target, task as ResponseTask) for a backend without classification,
// an estimator of ests it cannot run (lazy without gradients). name is
// the backend's name in the messages, which are worded as vi's flags.
func CheckBackend(name string, b framework.Backend, d *dataio.Dataset, target string, task *framework.Task, ests []framework.Estimator, opts map[string]string) error {
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
	if t, _, ok := ResponseTask(d, target, task); ok && t == framework.Binary && !caps.Classification {
		return framework.Usagef("backend %s does not do binary classification (the response of %s is 0/1; --task regression treats it as a number)", name, d.Source)
	}
	if t, _, ok := ResponseTask(d, target, task); ok && t == framework.Multiclass && !caps.Multiclass {
		return framework.Usagef("backend %s does not do multiclass classification (the response of %s is class labels 0..K-1; --task regression treats it as a number)", name, d.Source)
	}
	_, lacking := runnable(ests, caps)
	if len(lacking) > 0 {
		var need []string
		for _, e := range ests {
			if lacking[e.Name()] != nil {
				need = append(need, e.Name())
			}
		}
		fit := RunnableEstimators(caps)
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

// FittingEstimators drops from ests (a default list) those that a backend
// with caps cannot run, and returns a note saying so, naming the backend
// name ("" when none is dropped). When it would drop all, it keeps ests
// for CheckBackend to refuse.
func FittingEstimators(name string, caps framework.Capabilities, ests []framework.Estimator) ([]framework.Estimator, string) {
	out, lacking := runnable(ests, caps)
	if len(lacking) == 0 || len(out) == 0 {
		return ests, ""
	}
	dropped, what := lackingNames(ests, lacking)
	return out, fmt.Sprintf("backend %s has no %s: estimating with %s (not %s)",
		name, strings.Join(what, " or "), strings.Join(EstimatorNames(out), ", "), strings.Join(dropped, ", "))
}
