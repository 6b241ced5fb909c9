package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/internal/atomicfile"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/plot"
)

// Output formats of vi estimate.
var formats = []string{"table", "csv", "json"}

// writeReport writes r in the format (table, csv or json) to w.
func writeReport(w io.Writer, r *pipeline.Report, format string) error {
	switch format {
	case "table":
		return writeTable(w, r)
	case "csv":
		return writeCSV(w, r)
	case "json":
		return writeJSON(w, r)
	}
	return framework.Usagef("unknown --format %q (want one of %v)", format, formats)
}

// writeJSON writes a report as one indented JSON object: the --format json
// contract.
func writeJSON(w io.Writer, report any) error {
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
	if r.Inference != "" {
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
	fmt.Fprintf(w, "full model: %s %s %s (%s in %.2fs)\n",
		r.Measure, num(framework.Readable(r.Measure, r.Full.Score)), where, how, r.Full.Seconds)
	if m := evaluationMeaning(r); m != "" {
		fmt.Fprintln(w, m)
	}
	writeFullDiagnostics(w, r)
	fmt.Fprintln(w)
	// Numbers align right; feature and estimator are padded to a common
	// width first so that they read left-aligned.
	cols := reportColumns(r)
	fw, ew := len(cols[0]), len(cols[1])
	for _, res := range r.Results {
		fw = max(fw, len(res.Feature))
		ew = max(ew, len(res.Estimator))
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t%-*s\t", fw, cols[0], ew, cols[1])
	for _, c := range cols[2:] {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	for _, res := range r.Results {
		l := lambdaString(res, num)
		if l == "" {
			l = "-"
		}
		fmt.Fprintf(tw, "%-*s\t%-*s\t%s\t%s\t%s\t%s\t",
			fw, res.Feature, ew, res.Estimator, num(res.VI), num(res.SE), num(res.CILow), num(res.CIHigh))
		for _, p := range pValues(r, res, pnum) {
			fmt.Fprintf(tw, "%s\t", p)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t\n", l, res.Seconds)
	}
	return tw.Flush()
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

// checkOutDir reports, as a usage error naming flag, an output path that
// could not be written (atomicfile.CheckWritable: a missing directory, no
// permission, a directory in its place), so that a run does not fail only
// at its very end.
func checkOutDir(flag, path string) error {
	if err := atomicfile.CheckWritable(path); err != nil {
		return framework.Usagef("%s %s: %v", flag, path, err)
	}
	return nil
}

// fileFlag is a flag that names a file, and the file's path.
type fileFlag struct{ flag, path string }

// checkNotInput reports (a usage error) the first output in outs that is
// the same file as an input in ins (os.SameFile). Paths "" and "-", and
// files that do not exist, are skipped.
func checkNotInput(outs, ins []fileFlag) error {
	for _, o := range outs {
		ofi, ok := statFile(o.path)
		if !ok {
			continue
		}
		for _, in := range ins {
			if ifi, ok := statFile(in.path); ok && os.SameFile(ofi, ifi) {
				same := "is"
				if filepath.Clean(o.path) != filepath.Clean(in.path) {
					same = "is the same file as"
				}
				return framework.Usagef("%s %s %s %s %s: it would be overwritten; write the output to another file",
					o.flag, o.path, same, in.flag, in.path)
			}
		}
	}
	return nil
}

func statFile(path string) (os.FileInfo, bool) {
	if path == "" || path == "-" {
		return nil, false
	}
	fi, err := os.Stat(path)
	return fi, err == nil
}

// namedValue is a number of a report and what it is, for checkFinite.
type namedValue struct {
	name string
	v    float64
}

// checkFinite reports the first value that is NaN or infinite, naming
// where it is (framework.ErrNonFinite): a report must not carry one (JSON
// cannot) and a run must not succeed with one.
func checkFinite(where string, vals ...namedValue) error {
	for _, nv := range vals {
		if math.IsNaN(nv.v) || math.IsInf(nv.v, 0) {
			return fmt.Errorf("%s: %s is %g: %w (extreme values in the data, or a model that diverged)", where, nv.name, nv.v, framework.ErrNonFinite)
		}
	}
	return nil
}

// emit writes the bytes to path atomically, saying so on stderr, or to
// stdout when path is "".
func (a *app) emit(path string, buf *bytes.Buffer) error { return a.emitAs(path, "", buf) }

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

// checkPlot checks --plot: its format, from the extension, and that it is
// not --out. It returns the format ("" without --plot).
func checkPlot(path, out string) (string, error) {
	if path == "" {
		return "", nil
	}
	if path == out {
		return "", framework.Usagef("--plot and --out name the same file %s", path)
	}
	format, err := plot.Format(path)
	if err != nil {
		return "", framework.Usagef("--plot %s: want a .png, .svg or .pdf file", path)
	}
	return format, nil
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
