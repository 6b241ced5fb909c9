package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/estimators/shapley"
	"github.com/lazyvi/lazyvi/framework"
)

// shapleyOptions are the flags of vi shapley.
type shapleyOptions struct {
	data    *dataFlags
	fit     *fitFlags
	reduced string
	subsets int
	exact   bool
	plot    string
}

func newShapleyCommand() *Command {
	var o shapleyOptions
	cmd := &Command{
		UsageLine: "shapley [--data FILE] [--target COL] [--reduced lazy|retrain|dropout] [--subsets N] [--lambda L] [flags]",
		Short:     "estimate Shapley values of feature importance",
		Long: `Shapley estimates each feature's Shapley population variable importance
(SPVIM, Williamson and Feng 2020): the average gain in the measure from adding
the feature to a subset of the others, over subsets weighted as in the Shapley
value. Unlike the leave-one-out VI of "vi estimate", it shares the credit
between correlated features instead of giving each about zero.

It trains the full model once, draws --subsets subsets S from the Shapley
kernel (default ceil(2 p ln p), at least 100; every subset when there are no
more than that, or with --exact), fits a reduced model on each (the features
outside S replaced by their train means) and solves the least squares whose
solution is the Shapley value, with the values summing to the full model's
measure minus the intercept-only model's. Each value has a standard error
that adds the evaluation-sample variance and the subset-sampling variance,
and a Wald interval.

Reduced models (--reduced, comma-separated, in output order; the same subsets
for each):
  lazy     LazyVI from the full network's parameters. Its ridge penalty is
           chosen per subset by K-fold CV (--folds) unless --lambda fixes it;
           with a fixed penalty each subset costs one kernel and one Cholesky
           factorisation (the paper's appendix uses --lambda 50).
  retrain  a new network per subset (the reference, and the slow one).
  dropout  the full network on the reduced data (biased for correlated
           features; for comparison).

Data, backend and output flags are those of "vi estimate"; --format json adds
empty.score (the intercept-only model), the subset plan and per-estimator
totals to the estimate contract, with estimator "shapley-<reduced>". --plot
FILE.png draws the values with their intervals.

Example:

	vi simulate --setting linear --rho 0.9 --n 2000 --out lin.csv
	vi shapley --data lin.csv --measure r2 --reduced lazy,retrain --lambda 50`,
	}
	fs := &cmd.Flag
	o.data = newDataFlags(cmd, []string{"hidden", "epochs"}, map[string]string{
		"task":   "force the `task`: regression or binary",
		"hidden": "backend option hidden: hidden layer `widths`, e.g. 128",
	})
	o.fit = newFitFlags(fs, map[string]string{
		"seed": "random `seed` of the split, the training, the folds and the subsets",
	})
	fs.StringVar(&o.reduced, "reduced", "lazy", "comma-separated reduced-model `estimators`: lazy, retrain, dropout")
	fs.IntVar(&o.subsets, "subsets", 0, "`N` subsets drawn from the Shapley kernel (0: ceil(2 p ln p), at least 100)")
	fs.BoolVar(&o.exact, "exact", false, "fit every one of the 2^p - 2 subsets (p <= 20) instead of sampling")
	fs.StringVar(&o.plot, "plot", "", "also draw a bar chart with interval whiskers to this PNG `file`")
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return o.run(ctx, a, cmd, args) }
	return cmd
}

func init() { addCommand(newShapleyCommand) }

func (o *shapleyOptions) run(ctx context.Context, a *app, cmd *Command, args []string) (err error) {
	if err := noArgs(cmd, args); err != nil {
		return err
	}
	set := givenFlags(cmd)
	if err := o.data.checkOutput(o.plot); err != nil {
		return err
	}
	if o.plot != "" && o.plot == o.data.out {
		return framework.Usagef("--plot and --out name the same file %s", o.plot)
	}
	if err := o.fit.check(); err != nil {
		return err
	}
	if err := o.data.checkNotInput([]fileFlag{{"--plot", o.plot}}); err != nil {
		return err
	}
	switch {
	case o.subsets < 0:
		return framework.Usagef("--subsets must be positive (0: the default), got %d", o.subsets)
	case o.exact && set["subsets"]:
		return framework.Usagef("--exact fits every subset; do not give --subsets with it")
	}
	reds, err := o.fit.estimators(o.reduced)
	if err != nil {
		return fmt.Errorf("--reduced: %w", err)
	}
	r, err := o.data.check(a, set)
	if err != nil {
		return err
	}

	d, err := r.load(ctx)
	if err != nil {
		return err
	}
	cfg := r.config(nil)
	o.fit.config(&cfg)
	cfg.MinTrain = framework.MinTrainFor(reds)
	// Every check that needs no model, before the backend starts.
	if err := framework.CheckRun(d, cfg, r.measure, framework.EstimateOptions{Level: o.fit.level}); err != nil {
		return err
	}
	if t, _, ok := responseTask(d, r.target, r.task); ok && t == framework.Multiclass {
		return errShapleyMulticlass(d.Source)
	}
	_, cols := d.X.Dims()
	if _, err := shapley.NewPlan(cols-1, o.subsets, o.exact, o.fit.seed); err != nil {
		return err
	}

	prog := r.progress("shapley-" + strings.Join(estimatorNames(reds), "/"))
	defer prog.clear()
	be, closeBackend, err := r.open(ctx, prog)
	if err != nil {
		return err
	}
	defer keepErr(&err, closeBackend)
	if err := r.checkBackend(be, d, reds); err != nil {
		return err
	}
	r.training(prog, d)
	cfg.Backend = be
	ropt := shapley.RunOptions{
		Subsets: o.subsets, Exact: o.exact,
		Options: shapley.Options{Workers: o.fit.workers, Level: o.fit.level, Progress: prog.update},
	}
	ckpt, err := openCheckpoint(a, cmd, d, r.out, prog)
	if err != nil {
		return err
	}
	if ckpt != nil {
		ropt.Checkpoint = ckpt
	}
	rep, err := shapley.Run(ctx, d, cfg, r.measure, reds, ropt)
	prog.clear()
	if err == nil {
		err = shapleyFinite(rep)
	}
	if err != nil {
		return finishCheckpoint(ckpt, r.out, runError(ctx, err))
	}

	var buf bytes.Buffer
	if err := writeShapley(&buf, rep, r.format, fixedPenalty(reds)); err != nil {
		return err
	}
	if err := writePlot(o.plot, func(w io.Writer) error { return shapley.Plot(w, rep) }); err != nil {
		return err
	}
	if err := r.emit(&buf); err != nil {
		return err
	}
	return finishCheckpoint(ckpt, r.out, nil)
}

// shapleyFinite reports a score or a result that is not finite.
func shapleyFinite(rep *shapley.Report) error {
	if err := checkFinite("the full and intercept-only models", namedValue{"the full model's score", rep.Full.Score}, namedValue{"the intercept-only model's score", rep.Empty.Score}); err != nil {
		return err
	}
	for _, r := range rep.Results {
		if err := checkFinite(fmt.Sprintf("estimator %s, feature %s", r.Estimator, r.Feature),
			namedValue{"the Shapley value", r.VI}, namedValue{"the standard error", r.SE},
			namedValue{"the interval's lower end", r.CILow}, namedValue{"the interval's upper end", r.CIHigh},
			namedValue{"the influence standard error", r.SEInfluence}, namedValue{"the sampling standard error", r.SESampling}); err != nil {
			return err
		}
	}
	return nil
}

func writeShapley(w io.Writer, rep *shapley.Report, format string, lambda float64) error {
	switch format {
	case "json":
		return writeJSON(w, rep)
	case "csv":
		return writeShapleyCSV(w, rep)
	}
	return writeShapleyTable(w, rep, lambda)
}

var shapleyColumns = []string{"feature", "estimator", "vi", "se", "ci_low", "ci_high", "se_influence", "se_sampling", "seconds"}

func writeShapleyCSV(w io.Writer, rep *shapley.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(shapleyColumns); err != nil {
		return err
	}
	full := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range rep.Results {
		if err := cw.Write([]string{r.Feature, r.Estimator, full(r.VI), full(r.SE), full(r.CILow), full(r.CIHigh),
			full(r.SEInfluence), full(r.SESampling), strconv.FormatFloat(r.Seconds, 'f', 3, 64)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeShapleyTable(w io.Writer, rep *shapley.Report, lambda float64) error {
	fmt.Fprintf(w, "measure %s  task %s  backend %s  n %d  n_train %d  n_eval %d  seed %d  level %g\n",
		rep.Measure, rep.Task, rep.Backend, rep.N, rep.NTrain, rep.NEval, rep.Seed, rep.Level)
	fmt.Fprintf(w, "full model: %s %s (trained in %.2fs); intercept-only: %s; the values sum to the difference %s\n",
		rep.Measure, num(rep.Full.Score), rep.Full.Seconds, num(rep.Empty.Score), num(rep.Full.Score-rep.Empty.Score))
	if rep.Subsets.Exact {
		fmt.Fprintf(w, "subsets: all %d (exact; no sampling error)\n", rep.Subsets.Distinct)
	} else {
		fmt.Fprintf(w, "subsets: %d draws from the Shapley kernel, %d distinct\n", rep.Subsets.Draws, rep.Subsets.Distinct)
	}
	for _, s := range rep.Estimators {
		extra := ""
		if s.Estimator == "shapley-lazy" {
			if lambda > 0 {
				extra = fmt.Sprintf(", lambda %g", lambda)
			} else {
				extra = ", lambda by CV per subset"
			}
			if s.NoUpdate > 0 {
				extra += fmt.Sprintf(", %d subsets without update", s.NoUpdate)
			}
		}
		fmt.Fprintf(w, "%s: %.2fs%s\n", s.Estimator, s.Seconds, extra)
	}
	fmt.Fprintln(w)
	fw, ew := len("feature"), len("estimator")
	for _, r := range rep.Results {
		fw = max(fw, len(r.Feature))
		ew = max(ew, len(r.Estimator))
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t%-*s\tshapley\tse\tci_low\tci_high\tse_inf\tse_samp\t\n", fw, "feature", ew, "estimator")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%-*s\t%-*s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", fw, r.Feature, ew, r.Estimator,
			num(r.VI), num(r.SE), num(r.CILow), num(r.CIHigh), num(r.SEInfluence), num(r.SESampling))
	}
	return tw.Flush()
}

// errShapleyMulticlass is the usage error for a multiclass response, which
// the Shapley estimator does not support yet (its intercept-only model and
// fixed-penalty lazy path are for one output).
func errShapleyMulticlass(source string) error {
	return framework.Usagef("vi shapley supports regression and binary responses, not multiclass (%s: class labels 0..K-1; --task regression treats them as numbers)", source)
}

// fixedPenalty is the penalty that a reduced-model estimator fixes for
// every subset (lazy's --lambda), for the table's header; 0 when none does.
func fixedPenalty(reds []framework.Estimator) float64 {
	for _, e := range reds {
		if fp, ok := e.(interface{ FixedPenalty() (float64, bool) }); ok {
			if l, ok := fp.FixedPenalty(); ok {
				return l
			}
		}
	}
	return 0
}
