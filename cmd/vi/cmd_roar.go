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
	"github.com/lazyvi/lazyvi/workflows/roar"
)

// roarOptions are the flags of vi roar.
type roarOptions struct {
	data       *dataFlags
	fit        *fitFlags
	ordering   string
	fractions  string
	estimators string
	reportFlags
}

func newROARCommand() *Command {
	var o roarOptions
	cmd := &Command{
		UsageLine: "roar [--data FILE] [--ordering grad|random] [--fractions LIST] [--groups GROUPS] [--estimators LIST] [--plot FILE] [flags]",
		Short:     "evaluate importance orderings by removing features and retraining (ROAR)",
		Long: `Roar trains the full model once, orders the features (--ordering grad: by
the full model's mean absolute input gradient over the train split, largest
first; random: a seeded permutation; both: grad,random), and for each
fraction t of --fractions removes the first round(t p) features of the
ordering (replaced by their train mean) and scores the reduced model on the
evaluation split under each estimator (--estimators, default
dropout,retrain,lazy-es): retrain is ROAR proper (Hooker et al. 2019),
dropout keeps the full model, lazy-es continues the full model for
--es-steps optimizer steps (default 120) on the reduced data.

Groups: --groups (or --groups-file) as in 'vi estimate' makes the units
groups of columns instead of features: the orderings order the groups (grad:
by the sum of their columns' gradients) and a fraction t removes the first
round(t g) of the g groups, the columns in no group counting as groups of
one. With --image HxW, --groups patch2x2 removes 2x2 patches of pixels (rows,
cols and any RxC patch likewise), as ROAR on images does.

The score is the measure's larger-is-better value (accuracy; -mse for mse)
with its standard error sd(IF)/sqrt(n_eval); seconds is the estimator's wall
time for the reduced model, and the header sums them per estimator.

--format json writes {measure, results: [{ordering, fraction, estimator,
removed, removed_columns, score, se, seconds}], ...}; --plot FILE.png, .svg or .pdf draws the measure
(a loss as itself, lower being better) against the fraction removed, one
line per estimator and ordering, with --level intervals as bars.

Data, backend, task and options as in 'vi estimate' (--image HxW for the cnn
backend).`,
	}
	fs := &cmd.Flag
	o.data = newDataFlags(cmd, []string{"hidden", "epochs", "image"}, map[string]string{
		"measure": "predictiveness measure `name` (default: mse for regression, accuracy for classification)",
	})
	o.fit = newFitFlags(fs, map[string]string{
		"level": "`level` of the plot's interval bands",
		"seed":  "random `seed` of the split, the training and the random ordering",
	})
	fs.StringVar(&o.ordering, "ordering", "grad", "comma-separated `orderings`: grad, random")
	fs.StringVar(&o.fractions, "fractions", ".1,.25,.5,.75,.9,.99", "comma-separated `fractions` of features to remove")
	fs.StringVar(&o.estimators, "estimators", "dropout,retrain,lazy-es", "comma-separated estimator `names`")
	fs.StringVar(&o.plot, "plot", "", "also draw the curves to this `file` (.png, .svg or .pdf)")
	fs.StringVar(&o.model, "model", "", splitModelUsage)
	fs.StringVar(&o.groups, "groups", "", "remove `groups` of columns together: \"name=col,col;name=col,...\", onehot, or rows, cols or patchRxC of the --image")
	fs.StringVar(&o.groupsFile, "groups-file", "", "read groups from `file`, one \"name: col, col\" a line")
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return o.run(ctx, a, cmd, args) }
	return cmd
}

func (o *roarOptions) run(ctx context.Context, a *app, cmd *Command, args []string) (err error) {
	pf, err := o.preflight(ctx, cmd, args, o.data, o.fit)
	if err != nil {
		return err
	}
	set, groups, onehot := pf.set, pf.groups, pf.onehot
	orderings, err := roar.ParseOrderings(o.ordering)
	if err != nil {
		return err
	}
	fractions, err := roar.ParseFractions(o.fractions)
	if err != nil {
		return err
	}
	ests, err := o.fit.estimators(o.estimators)
	if err != nil {
		return err
	}
	var saved *dataio.SavedModel
	r, d, err := o.data.setup(ctx, a, set, func(r *dataRun) (err error) {
		saved, err = r.splitModel(ctx, o.model, set)
		return err
	})
	if err != nil {
		return err
	}
	cfg, err := o.fit.splitConfig(r, saved, set, ests)
	if err != nil {
		return err
	}
	if g := strings.ToLower(strings.TrimSpace(o.groups)); isImageGrouping(g) {
		if groups, err = imageGroups(d, r.target, *o.data.options["image"], g); err != nil {
			return err
		}
	}
	cfg.Groups, cfg.OneHot = groups, onehot
	// Every check that needs no model, before the backend starts.
	if err := pipeline.CheckRun(d, cfg, r.measure, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Level: o.fit.level}}); err != nil {
		return err
	}

	prog := r.progress("roar " + strings.Join(pipeline.EstimatorNames(ests), "/"))
	defer prog.Close()
	be, closeBackend, err := r.start(ctx, prog, d, ests)
	if err != nil {
		return err
	}
	defer keepErr(&err, closeBackend)
	cfg.Backend = be
	p, err := pipeline.Prepare(ctx, d, cfg)
	if err != nil {
		return runError(ctx, err)
	}
	defer p.Close()
	measure := r.measure
	if measure == nil {
		if measure, err = framework.LookupMeasure(roar.DefaultMeasure(p.Task)); err != nil {
			return err
		}
	}
	var units []framework.Feature
	if len(groups) > 0 || onehot || d.Encoding != nil {
		// The file's columns (an encoded column's indicators together)
		// or the groups are the units.
		if units, err = dataio.ResolveUnits(p.FeatureNames, d.Units(), r.targetName(d), groups, onehot); err != nil {
			return err
		}
	}
	prog.SetStatus("ordering the features")
	rep, err := roar.Run(ctx, p, measure, ests, roar.Options{Orderings: orderings, Fractions: fractions,
		Workers: o.fit.workers, Level: o.fit.level, Progress: prog.Update, Groups: units})
	prog.Clear()
	if err != nil {
		return runError(ctx, err)
	}
	if err := roarFinite(rep); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.WriteROAR(&buf, rep, r.format, pipeline.EstimatorNames(ests)); err != nil {
		return err
	}
	// The report first: a plot that fails cannot cost the results.
	if err := r.emit(&buf); err != nil {
		return err
	}
	return a.writePlot(o.plot, "plot", func(w io.Writer) error { return plot.ROAR(rep, r.targetName(d)).Write(w, pf.plotFormat) })
}

// roarFinite reports a score or standard error that is not finite.
func roarFinite(rep *roar.Report) error {
	if err := checkFinite("the full model", namedValue{"the score", rep.Full.Score}, namedValue{"the standard error", rep.Full.SE}); err != nil {
		return err
	}
	for _, r := range rep.Results {
		if err := checkFinite(fmt.Sprintf("estimator %s, ordering %s, fraction %g", r.Estimator, r.Ordering, r.Fraction),
			namedValue{"the score", r.Score}, namedValue{"the standard error", r.SE}); err != nil {
			return err
		}
	}
	return nil
}
