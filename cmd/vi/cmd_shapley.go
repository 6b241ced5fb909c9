package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/plot"
	"github.com/lazyvi/lazyvi/report"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// shapleyOptions are the flags of vi shapley.
type shapleyOptions struct {
	data    *dataFlags
	fit     *fitFlags
	reduced string
	exact   bool
	reportFlags

	// The sampling, inference and group flags.
	subsets, maxSubsets int
	adjust              string
}

func newShapleyCommand() *Command {
	var o shapleyOptions
	cmd := &Command{
		UsageLine: "shapley [--data FILE] [--target COL] [--reduced lazy|retrain|dropout] [--max-subsets N] [--lambda L] [flags]",
		Short:     "estimate Shapley values of feature importance",
		Long: `Shapley estimates each feature's Shapley population variable importance
(SPVIM, Williamson and Feng 2020): the average gain in the measure from adding
the feature to a subset of the others, over subsets weighted as in the Shapley
value. Unlike the leave-one-out VI of "vi estimate", it shares the credit
between correlated features instead of giving each about zero.

It trains the full model once, fits a reduced model on subsets S of the
features (the features outside S replaced by their train means) and solves
the least squares whose solution is the Shapley value, with the values
summing to the full model's measure minus the intercept-only model's.
Subsets: every one of the 2^p - 2 while that is at most 1022 (p <= 10, or
with --exact); otherwise the sizes {1, p-1}, {2, p-2}, ... whose subsets fit
in 1022 are enumerated with their exact kernel weights and the other sizes
sampled from the Shapley kernel in complement pairs, in batches, until the
sampling error is negligible: the largest sampling SE at most 0.025 of the
range of the values (SAGE's rule; the summary says converged and the
figure), or --max-subsets reduced models (default 16384) are fitted.
--subsets N fits N subsets instead, whatever the figure. The subsets depend
on --seed only, not on --workers. Each value has a standard error that adds
the evaluation-sample variance and the subset-sampling variance, a Wald
interval and the one-sided p-value of H0: value <= 0; --adjust holm or bh
adjusts the p-values over the features. On a terminal the progress bar's
total and eta are the forecast of the reduced models still needed.

Groups: --groups "a=x1,x2;b=x3" (or --groups-file FILE, one "name: col, col"
a line, or --groups onehot) makes each group one player whose columns are
kept or dropped together; the columns in no group are players alone.

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
empty.score (the intercept-only model), the subset design and per-estimator
totals (subsets, converged, figure) to the estimate contract, with estimator
"shapley-<reduced>". --plot FILE.png, .svg or .pdf draws a forest plot of
the values with their intervals.
More in docs/shapley.md.

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
	fs.BoolVar(&o.exact, "exact", false, "fit every one of the 2^p - 2 subsets (p <= 20) instead of sampling")
	fs.StringVar(&o.plot, "plot", "", "also draw the values with their intervals to this `file` (.png, .svg or .pdf): a forest plot")
	fs.IntVar(&o.subsets, "subsets", 0, "fit exactly `N` subsets instead of stopping when the sampling error is negligible")
	fs.IntVar(&o.maxSubsets, "max-subsets", shapley.DefaultMaxSubsets, "fit at most `N` subsets while sampling")
	fs.StringVar(&o.adjust, "adjust", "none", "adjust the p-values over the features: `method` holm, bh or none")
	fs.StringVar(&o.groups, "groups", "", "players that are `groups` of columns: \"name=col,col;name=col,...\" or onehot for columns sharing a prefix_")
	fs.StringVar(&o.groupsFile, "groups-file", "", "read groups from `file` (-: standard input), one \"name: col, col\" a line")
	fs.StringVar(&o.model, "model", "", splitModelUsage)
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return o.run(ctx, a, cmd, args) }
	return cmd
}

func (o *shapleyOptions) run(ctx context.Context, a *app, cmd *Command, args []string) (err error) {
	pf, err := o.preflight(ctx, cmd, args, o.data, o.fit)
	if err != nil {
		return err
	}
	set := pf.set
	switch {
	case o.subsets < 0:
		return framework.Usagef("--subsets must be positive (0: stop when the sampling error is negligible), got %d", o.subsets)
	case o.maxSubsets < 1:
		return framework.Usagef("--max-subsets must be positive, got %d", o.maxSubsets)
	case o.exact && (set["subsets"] || set["max-subsets"]):
		return framework.Usagef("--exact fits every subset; do not give --subsets or --max-subsets with it")
	case set["subsets"] && set["max-subsets"]:
		return framework.Usagef("--subsets fixes the number of subsets; do not give --max-subsets with it")
	}
	adjust, err := inference.ParseAdjust(o.adjust)
	if err != nil {
		return err
	}
	if g := strings.ToLower(strings.TrimSpace(o.groups)); g == "rows" || g == "cols" {
		return framework.Usagef("--groups %s is for the pixels of an image (vi estimate --image); give the groups by name", g)
	}
	stop := shapley.Stop{Rule: shapley.DefaultRule, MaxSubsets: o.maxSubsets, Subsets: o.subsets}
	reds, err := o.fit.estimators(o.reduced)
	if err != nil {
		return fmt.Errorf("--reduced: %w", err)
	}
	var saved *dataio.SavedModel
	r, d, err := o.data.setup(ctx, a, set, func(r *dataRun) (err error) {
		saved, err = r.splitModel(ctx, o.model, set)
		return err
	})
	if err != nil {
		return err
	}
	cfg, err := o.fit.splitConfig(r, saved, set, reds)
	if err != nil {
		return err
	}
	cfg.Groups, cfg.OneHot = pf.groups, pf.onehot
	// Every check that needs no model, before the backend starts.
	if err := pipeline.CheckRun(d, cfg, r.measure, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Level: o.fit.level}}); err != nil {
		return err
	}
	if t, _, ok := pipeline.ResponseTask(d, r.target, r.task); ok && t == framework.Multiclass {
		return errShapleyMulticlass(d.Source)
	}
	players, err := shapley.Players(d, cfg)
	if err != nil {
		return err
	}
	if _, err := shapley.NewDesign(len(players), stop, o.exact, o.fit.seed); err != nil {
		return err
	}

	prog := r.progress("shapley-" + strings.Join(pipeline.EstimatorNames(reds), "/"))
	defer prog.Close()
	be, closeBackend, err := r.start(ctx, prog, d, reds)
	if err != nil {
		return err
	}
	defer keepErr(&err, closeBackend)
	cfg.Backend = be
	ropt := shapley.RunOptions{
		Exact: o.exact, Stop: stop,
		Options: shapley.Options{Workers: o.fit.workers, Level: o.fit.level, Progress: prog.Update, Adjust: adjust},
	}
	ckpt, err := openCheckpoint(a, newRunID(cmd, d, saved), r.out, prog)
	if err != nil {
		return err
	}
	if ckpt != nil {
		ropt.Checkpoint = ckpt
	}
	rep, err := shapley.Run(ctx, d, cfg, r.measure, reds, ropt)
	prog.Clear()
	if err == nil {
		err = shapleyFinite(rep)
	}
	if err != nil {
		return ckpt.Finish(runError(ctx, err))
	}

	var buf bytes.Buffer
	if err := report.WriteShapley(&buf, rep, r.format, shapley.FixedPenalty(reds)); err != nil {
		return err
	}
	// The report first: a plot that fails cannot cost the results.
	if err := r.emit(&buf); err != nil {
		return err
	}
	if err := ckpt.Finish(nil); err != nil {
		return err
	}
	return a.writePlot(o.plot, "forest plot", func(w io.Writer) error { return plot.Shapley(rep, r.targetName(d)).Write(w, pf.plotFormat) })
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

// errShapleyMulticlass is the usage error for a multiclass response, which
// the Shapley estimator does not support yet (its intercept-only model and
// fixed-penalty lazy path are for one output).
func errShapleyMulticlass(source string) error {
	return framework.Usagef("vi shapley supports regression and binary responses, not multiclass (%s: class labels 0..K-1; --task regression treats them as numbers)", source)
}
