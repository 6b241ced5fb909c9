// Package report writes the reports of lazyvi's runs as vi prints them:
// an estimate report (pipeline.Report), a Shapley report and a ROAR report,
// each as an aligned table, CSV or JSON (the JSON contract of
// docs/json.md).
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// Formats are the formats a report is written in.
var Formats = []string{"table", "csv", "json"}

// Write writes the estimate report r to w in format: table, csv or json.
func Write(w io.Writer, r *pipeline.Report, format string) error {
	switch format {
	case "table":
		return writeTable(w, r)
	case "csv":
		return writeCSV(w, r)
	case "json":
		return WriteJSON(w, r)
	}
	return framework.Usagef("unknown --format %q (want one of %v)", format, Formats)
}

// WriteJSON writes a report as one indented JSON object: the JSON
// contract of docs/json.md.
func WriteJSON(w io.Writer, report any) error {
	b, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

var columns = []string{"feature", "estimator", "vi", "se", "ci_low", "ci_high", "p_value", "lambda", "seconds"}

// reportColumns are the columns of r: columns, with p_adjusted after
// p_value when the p-values were adjusted.
func reportColumns(r *pipeline.Report) []string {
	if !adjusted(r) {
		return columns
	}
	out := append([]string(nil), columns[:7]...)
	return append(append(out, "p_adjusted"), columns[7:]...)
}

func adjusted(r *pipeline.Report) bool {
	return len(r.Results) > 0 && r.Results[0].PAdjusted != nil
}

// pValues returns the result's p-value and, when adjusted, the adjusted one.
func pValues(r *pipeline.Report, res inference.Result, format func(float64) string) []string {
	out := []string{format(res.PValue)}
	if adjusted(r) {
		a := ""
		if res.PAdjusted != nil {
			a = format(*res.PAdjusted)
		}
		out = append(out, a)
	}
	return out
}

// writeCSV writes a header and one row per result, numbers at full
// precision. The lambda column is empty where it does not apply and "inf"
// where lazy kept the full model (no update).
func writeCSV(w io.Writer, r *pipeline.Report) error {
	cw := csv.NewWriter(w)
	cols := reportColumns(r)
	if r.BiasAware {
		// The bias bound the interval and the p-value allow for, after
		// the interval's bounds.
		cols = slices.Insert(cols, 6, "bias_bound")
	}
	if err := cw.Write(cols); err != nil {
		return err
	}
	full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, res := range r.Results {
		rec := []string{res.Feature, res.Estimator, full(res.VI), full(res.SE), full(res.CILow), full(res.CIHigh)}
		if r.BiasAware {
			rec = append(rec, full(res.BiasBound))
		}
		rec = append(rec, pValues(r, res, full)...)
		rec = append(rec, lambdaString(res, full), strconv.FormatFloat(res.Seconds, 'f', 3, 64))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// lambdaString is the lambda column: the result's "lambda" field (lazy's
// penalty), "inf" when it says "no_update", "" when it has neither.
func lambdaString(res inference.Result, format func(float64) string) string {
	if nu, _ := res.Get("no_update"); nu == true {
		return "inf"
	}
	if v, _ := res.Get("lambda"); v != nil {
		if l, ok := v.(float64); ok {
			return format(l)
		}
	}
	return ""
}

// writeTable writes a header line with the run's settings and the full
// model's score, then the results in aligned columns.
func writeTable(w io.Writer, r *pipeline.Report) error {
	level := r.Level
	if level == 0 {
		level = inference.DefaultLevel
	}
	fmt.Fprintf(w, "measure %s  task %s  backend %s  n %d  n_train %d  n_eval %d  seed %d  level %g\n",
		r.Measure, r.Task, r.Backend, r.N, r.NTrain, r.NEval, r.Seed, level)
	writeInference(w, r)
	where := "on the evaluation split"
	if r.Partition {
		where = "on the evaluation rows"
	}
	if r.CrossFit > 0 {
		where = fmt.Sprintf("averaged over the %d folds", r.CrossFit)
	}
	if r.Repeats > 1 {
		where = fmt.Sprintf("averaged over %d repetitions", r.Repeats)
		if r.Partition {
			where += " on the evaluation rows"
		}
		if r.CrossFit > 0 {
			where = fmt.Sprintf("averaged over %d repetitions of %d folds", r.Repeats, r.CrossFit)
		}
	}
	how := "trained"
	if r.Full.Loaded {
		how = "loaded"
	}
	if r.Ensemble && r.Full.SingleScore != nil {
		// The ensemble is the full model the VIs are computed from.
		where = fmt.Sprintf("on every row, its out-of-fold predictions averaged over %d repetitions", r.Repeats)
		if r.CrossFit > 0 {
			where += fmt.Sprintf(" of %d folds", r.CrossFit)
		}
		how = fmt.Sprintf("a single model's: %s; trained", num(readable(r.Measure, *r.Full.SingleScore)))
	}
	fmt.Fprintf(w, "full model: %s %s %s (%s in %.2fs)\n",
		r.Measure, num(readable(r.Measure, r.Full.Score)), where, how, r.Full.Seconds)
	if m := evaluationMeaning(r); m != "" {
		fmt.Fprintln(w, m)
	}
	writeFullDiagnostics(w, r)
	fmt.Fprintln(w)
	return writeResults(w, r)
}

// writeInference writes the table header's line on the inference, and
// the line on the estimators that declined the ensemble; nothing when the
// report does not say its inference.
func writeInference(w io.Writer, r *pipeline.Report) {
	if r.Inference == "" {
		return
	}
	fmt.Fprintf(w, "inference %s", r.Inference)
	if r.Perturb > 0 {
		fmt.Fprintf(w, " (rho %g)", r.Perturb)
	}
	if r.CrossFit > 0 {
		fmt.Fprintf(w, "  crossfit %d", r.CrossFit)
	}
	if r.Repeats > 1 {
		fmt.Fprintf(w, "  repeats %d", r.Repeats)
		if r.Ensemble {
			fmt.Fprint(w, " (predictions averaged)")
		}
		if r.Debias {
			fmt.Fprint(w, "  debiased")
		}
		if r.BiasAware {
			fmt.Fprint(w, "  bias-aware")
			if r.BiasDirected {
				fmt.Fprint(w, " (directed)")
			}
		}
	}
	if r.ScoreUpper {
		fmt.Fprint(w, "  upper ends: score")
	}
	fmt.Fprintf(w, "  p_value: H0 VI <= %g", r.Delta)
	if by := covarianceTested(r.Results); len(by) > 0 {
		fmt.Fprintf(w, " (%s: covariance test)", strings.Join(by, ", "))
	}
	if r.Adjust != "" && r.Adjust != "none" {
		fmt.Fprintf(w, "  adjust %s", r.Adjust)
	}
	if r.CITruncate {
		fmt.Fprint(w, "  intervals floored at 0")
	}
	fmt.Fprintln(w)
	if l := unensembledLine(r); l != "" {
		fmt.Fprintln(w, l)
	}
}

// pnum formats a p-value for the table: 3 significant digits, "<1e-16"
// below.
func pnum(p float64) string {
	switch {
	case p < 1e-16:
		return "<1e-16"
	case p >= 0.001:
		return strconv.FormatFloat(p, 'f', 3, 64)
	}
	return strconv.FormatFloat(p, 'e', 1, 64)
}

// num formats a number for the table: four significant digits, no
// exponent for moderate magnitudes.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 0):
		if v > 0 {
			return "inf"
		}
		return "-inf"
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	if a >= 1e-4 && a < 1e6 {
		digits := 3 - int(math.Floor(math.Log10(a)))
		if digits < 0 {
			digits = 0
		}
		return strconv.FormatFloat(v, 'f', digits, 64)
	}
	return strconv.FormatFloat(v, 'e', 3, 64)
}

// unensembledLine says, for the table's header, which estimators declined
// the run's ensemble (inference.CombinedRepetitions) and what their rows
// are instead; "" when none did.
func unensembledLine(r *pipeline.Report) string {
	var names []string
	for _, res := range r.Results {
		if res.Combined == inference.CombinedRepetitions && !slices.Contains(names, res.Estimator) {
			names = append(names, res.Estimator)
		}
	}
	if len(names) == 0 {
		return ""
	}
	not := "not averaged over models"
	if r.Debias {
		not += ", not debiased"
	}
	if r.BiasAware {
		not += ", no bias bound"
	}
	return fmt.Sprintf("%s: the mean of the repetitions' own estimates (random reduced predictions: %s)", strings.Join(names, ", "), not)
}

// evaluationMeaning says, for the table's header, which rows judged a
// loaded network and so what its VIs mean; "" for a network trained here.
func evaluationMeaning(r *pipeline.Report) string {
	switch {
	case !r.Full.Loaded:
		return ""
	case r.Partition:
		return fmt.Sprintf("loaded network judged on %d evaluation rows held out from its training rows: each VI is what the network loses on rows it never saw without the feature (the reduced models learn from the %d training rows)", r.NEval, r.NTrain)
	case r.TrainedElsewhere:
		return fmt.Sprintf("loaded network trained elsewhere (--trained-elsewhere): each VI is what it loses without the feature on a seeded evaluation split of %d rows of this data, valid only if none of these rows trained it (if they did, null features look important)", r.NEval)
	}
	return fmt.Sprintf("loaded network judged on a seeded split of %d rows that may include its training rows", r.NEval)
}

// writeFullDiagnostics writes the table header's lines on the full model:
// its architecture and training, its R², and the baselines.
func writeFullDiagnostics(w io.Writer, r *pipeline.Report) {
	var parts []string
	if f := r.Full; f.Hidden != "" {
		h := "hidden " + f.Hidden
		switch {
		case f.Selection != "":
			h += " (auto: " + f.Selection + ")"
		case len(f.Candidates) > 1:
			names := make([]string, len(f.Candidates))
			for i, c := range f.Candidates {
				names[i] = c.Name
			}
			h += " (auto, of " + strings.Join(names, " | ") + ")"
		}
		parts = append(parts, h)
	}
	if r.Full.Architecture != "" {
		parts = append(parts, r.Full.Architecture)
	}
	if r.Full.Loaded {
		parts = append(parts, "loaded, not trained")
	}
	if r.Full.StoppedBy != "" {
		parts = append(parts, fmt.Sprintf("%d epochs, stopped by %s", r.Full.Epochs, r.Full.StoppedBy))
	}
	if r.Full.R2 != nil {
		parts = append(parts, "R2 "+num(*r.Full.R2))
	}
	if r.Full.Accuracy != nil && r.Measure != "accuracy" {
		parts = append(parts, "accuracy "+num(*r.Full.Accuracy))
	}
	if r.Full.AUC != nil && r.Measure != "auc" {
		parts = append(parts, "AUC "+num(*r.Full.AUC))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "full model: %s\n", strings.Join(parts, "; "))
	}
	if l := choiceLine(r); l != "" {
		fmt.Fprintln(w, l)
	}
	if len(r.Full.Baselines) > 0 {
		bs := make([]string, len(r.Full.Baselines))
		for i, b := range r.Full.Baselines {
			// Gain is the full model's score minus the baseline's: the
			// baseline's loss minus the full model's for a loss.
			than := "better"
			if b.Gain < 0 {
				than = "worse"
			}
			bs[i] = fmt.Sprintf("%s %s (full model %s by %s, se %s)", b.Name, num(readable(r.Measure, b.Score)), than, num(math.Abs(b.Gain)), num(b.GainSE))
		}
		fmt.Fprintf(w, "baselines: %s %s\n", r.Measure, strings.Join(bs, ", "))
	}
}

// choiceLine says how the full model's kind was chosen: the chosen kind's
// cross-validated loss, the others' with the standard error of their
// difference from the backend's model, and why; "" without a choice.
func choiceLine(r *pipeline.Report) string {
	c := r.Full.Choice
	if c == nil || len(c.Kinds) < 2 {
		return ""
	}
	name := func(k dataio.KindScore) string {
		if k.Model == "" {
			return k.Name
		}
		return k.Name + " (" + kindModel(k, c) + ")"
	}
	var chosen string
	var others []string
	for _, k := range c.Kinds {
		if k.Name == c.Chosen {
			chosen = name(k) + " with cross-validated " + c.Measure + " " + num(k.Loss)
			continue
		}
		others = append(others, name(k)+" "+num(k.Loss))
	}
	var ses []string
	for _, k := range c.Kinds[1:] {
		ses = append(ses, num(k.DiffSE))
	}
	return fmt.Sprintf("model choice: %s vs %s, se of the difference %s: %s", chosen, strings.Join(others, ", "), strings.Join(ses, ", "), c.Reason)
}

// autoHiddenBackend is the backend whose architecture --hidden auto
// chooses (and the header names by its hidden widths).
const autoHiddenBackend = "mlp"

// kindModel is a kind's model as the header names it: the mlp's chosen
// architecture as its hidden widths.
func kindModel(k dataio.KindScore, c *dataio.ModelChoice) string {
	if k.Name == autoHiddenBackend && k.Name == c.Kinds[0].Name && !strings.Contains(k.Model, " ") {
		return "hidden " + k.Model
	}
	return k.Model
}

// covarianceTested are the estimators whose p-values come from the
// covariance test (inference.TestCovariance), in the results' order.
func covarianceTested(res []inference.Result) []string {
	var out []string
	for _, r := range res {
		if r.Test == inference.TestCovariance.String() && !slices.Contains(out, r.Estimator) {
			out = append(out, r.Estimator)
		}
	}
	return out
}

// isLossNamed reports whether the registered measure named is a
// framework.Loss.
func isLossNamed(name string) bool {
	m, err := framework.LookupMeasure(name)
	return err == nil && framework.LossOf(m, 0) != nil
}

// readable is a score as a person reads it under the named measure: the
// loss (-score) for a framework.Loss, the score itself otherwise.
func readable(measure string, score float64) float64 {
	if isLossNamed(measure) {
		return -score
	}
	return score
}
