package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inferflags"
	"github.com/lazyvi/lazyvi/internal/flagmsg"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/plot"
	"github.com/lazyvi/lazyvi/report"
)

// estimateOptions are the flags of vi estimate.
type estimateOptions struct {
	data       *dataFlags
	fit        *fitFlags
	estimators string
	// check is --check: the number of features to retrain as a check.
	check int
	reportFlags
	inf inferflags.Flags // the inference flags
	// The shard of the features to estimate.
	shard      string
	shardCount int
}

// estimateLong is vi help estimate's text.
const estimateLong = `Estimate trains the full model, then estimates each feature's variable
importance (VI) with each estimator, with a standard error, a confidence
interval and a p-value, on rows the models were not trained on. By default
every row is evaluated by models trained without it: three folds, each in
turn the evaluation set, cross-fitted three times with other seeds (see
Inference below); --repeats 1 --crossfit 0 trains once on a train split.

The data is a CSV file with a header row of column names and a number in every
cell; --target names the response (default: the last column). Without --data,
estimate uses a built-in copy of the diabetes data (442 patients, 10 features,
response "target"). The task is regression unless the response is 0/1, which
makes it binary classification, or class labels 0..K-1 (integers, every one
present, 3 <= K <= 20, each class at least 5 rows), which makes it
multiclass (predictions are K class probabilities; measures accuracy and
logloss); --task forces it.

Evaluation rows: --eval-data TEST.csv (the columns of --data) makes every
model learn from --data's rows only and every score, VI, interval and test
use TEST's rows only; --split-column COL says it with a column of --data
instead: train/eval, or fold numbers 1..K, your own cross-fitting folds
(fold k's rows are evaluated by models trained on the other rows). The
column is not a feature. The default then repeats the training three
times with other seeds on the given split and averages the networks'
predictions (--repeats 1: once). A network loaded with --opt weights= (a
plugin's pretrained model) must be judged on rows it never saw: without
--eval-data or --split-column the run is refused, unless
--trained-elsewhere says that none of --data's rows trained it; it is
judged once (no --crossfit, --repeats or --ensemble).

VI is positive for a feature that helps: for mse it is the reduced model's MSE
minus the full model's, in squared units of the response; for accuracy the
full model's accuracy minus the reduced model's. Lazy, lazy-es and warm-es
compare their reduced model with their own baseline instead, the same refit
of the full model with no feature removed (once per fold): validation
stopping leaves the full network short of its training loss's minimum, and
what the refit adds to any model must not count as importance.

Estimators (--estimators, comma-separated; default lazy,dropout): the
first one's table answers what matters, the others follow.
  lazy     LazyVI: the full network shifted by a ridge regression on its own
           gradients; its penalty per feature by K-fold CV (--folds) unless
           --lambda fixes it. The lambda column shows the penalty chosen, "inf"
           when no update was best (the reduced model is then dropout's,
           scored against lazy's baseline).
  dropout  the full model with the feature set to its mean (biased up for
           correlated features).
  retrain  a new model trained without the feature: the reference, at a
           training per feature and model, so that it runs only when asked;
           --check K runs it on the K features lazy ranks highest and says
           how lazy agrees with it there.
  lazy-es  the full model trained on a few more optimizer steps (--es-steps,
           default 120) on the data without the feature, from its own
           parameters (backends with warm starts: mlp, cnn).
  warm-es  Sun and Raskutti's warm start: the full model trained on without
           the feature, epoch by epoch, until the validation slice its own
           training held out stops improving (at most --es-epochs, default
           100; mlp, cnn).

The model comes from a backend (see "vi backends"), a built-in one run in vi's
own process; its options are passed with --hidden, --epochs and --opt
key=value and keep the backend's defaults when not set. --plugin PATH runs an
external backend executable instead, in a subprocess; --plugin-attach LINE
uses one that a running process already serves (as lazyvi_torch.importance
serves a network in a Python process's memory; docs/python.md). For the
mlp, --hidden auto (the default) trains a few architectures and keeps the
one its validation slice scores best, and then keeps the network only where
its cross-validated loss beats a linear model's (least squares or logistic
regression, its ridge cross-validated) by more than the standard error of
the difference: otherwise the linear model is the full model ("model
choice:" in the header says which and why). The header (and "full" in JSON)
says which model, how training ended, R2 (accuracy and AUC for a 0/1
response), and how the full model compares with intercept-only and linear
baselines on the same rows, with a warning on stderr when it is no better
than the linear one or training hit the epoch cap (docs/defaults.md).

Groups: --groups "climate=sst1,sst2;demog=age,sex" (or --groups-file FILE,
one "name: col, col" a line) estimates the importance of each group, its
columns dropped together, under the group's name; the columns in no group
follow one by one. --groups onehot groups the columns that share a "prefix_"
(one-hot indicators of one categorical variable). With --image HxW, --groups
rows, cols or patchRxC makes one group per pixel row, column or RxC patch.

Inference: by default vi cross-fits three folds three times with other seeds
(nine full models; --crossfit and --repeats change the counts) and averages
each row's three out-of-fold predictions of every model (--ensemble). Both
models are scored on the same rows (the paired estimate, --inference plain),
and the estimate is extrapolated to an ensemble of infinitely many
repetitions from the difference between the ensemble's estimate and the
repetitions' own (--debias): what each network fitted of its training
data's noise, the bias of a paired estimate, shrinks as 1/M in an ensemble
of M. Its standard error holds the three repetitions' spread (the
training's variability); vi, se, the interval and p_value all come from
this one estimate, so the interval holds vi and lies above --delta exactly
when p_value < (1 - level)/2. With mse or r2 the interval's upper end
comes from the standard error the estimate would have there, which grows
with the VI (--score-upper; a network that learns less of a feature on an
unlucky sample gives both a low estimate and a low se): the lower end and
the p-value are the symmetric interval's. Each interval is also widened by
the size of the --debias correction (a bound on the bias left) on the side
the correction came from: the lower end, and with it the p-value, where the
correction moved the estimate down; the upper end where it moved it up
(--bias-aware, on with --debias; --bias-two-sided widens both ends). docs/inference.md has the study behind this choice.
--inference split scores the full model on some folds and the reduced
model on the others (wide intervals that keep their width for features
without importance, little power); --inference perturbed adds a small
seeded noise to every row's paired difference (sd --perturb times the full
model's influence sd; Dai, Shen and Pan 2022). --train-frac, --crossfit 0
or --repeats 1 run one split instead, a ninth of the cost, with split
inference unless --inference says otherwise. --model FILE loads the
networks vi train saved instead of training them; the file's folds,
repetitions and train share are the run's, which gives exactly the numbers
of the run that trains them (vi train's default: this default's nine). --ensemble=false with --crossfit K --repeats M averages the M
repetitions' estimates instead of their predictions, the spread of the M
estimates added to the standard error.
Each result has the one-sided p-value of H0: VI <= --delta
(default 0); --adjust holm or bh adjusts them over each estimator's features
(column p_adjusted).
--ci-truncate floors the intervals at 0.

The table has one row per feature of the first estimator (lazy by
default), the most important first: its VI, se, interval and p-value, and
dropout's VI in a column beside it (the gap between the two is what
correlated features do to dropout). Every other estimator follows in a
block of its own, its rows in the first table's order; then --check's
block. The header's full model is the one the VIs are computed from (with
the default ensemble: every row's out-of-fold predictions averaged, a
single model's loss in parentheses), and each baseline's "better by" is the
difference of the two losses printed.

Output goes to stdout, or with --out FILE to FILE, replaced atomically and only
when the whole run succeeds. --format json (every estimator's rows; see
docs/json.md) is a stable contract, as is --format csv (a row per feature
and estimator).
--plot FILE.png, .svg or .pdf draws a forest plot: a row per feature, the most
important at the top, each estimator's VI and interval.

Progress goes to stderr (--progress): a bar when stderr is a terminal, whatever
stdout and --format are; a plain line every 30 s when it is a file or a pipe.

Exit codes: 0 success, 2 bad usage or bad input, 1 anything else.`

func newEstimateCommand() *Command {
	var o estimateOptions
	cmd := &Command{
		UsageLine: "estimate [--data FILE] [--target COL] [--estimators LIST] [--measure NAME] [flags]",
		Short:     "estimate variable importance from a CSV file",
		Long:      estimateLong,
	}

	fs := &cmd.Flag
	o.data = newDataFlags(cmd, []string{"hidden", "epochs", "image"}, map[string]string{
		"task":   "force the `task`: regression, binary or multiclass (default: binary for a 0/1 response, multiclass for labels 0..K-1 (3 <= K <= 20, each with 5 rows or more), else regression)",
		"plugin": "run the backend from this external plugin `executable` instead of a built-in one",
		"hidden": "backend option hidden: hidden layer `widths`, e.g. 50 or 100,50; auto (the mlp's default) chooses among a few on a validation slice",
		"epochs": "backend option epochs: maximum training `epochs` (backend default when not set)",
		"image":  "backend option image: the features are the pixels of an image of `HxW`, row-major (backend cnn)",
	})
	o.fit = newFitFlags(fs, map[string]string{
		"train-frac": "`share` of rows in the train split; the rest is for evaluation",
		"workers":    "estimate `N` features at a time",
	})
	o.inf.Register(fs)
	fs.StringVar(&o.estimators, "estimators", strings.Join(lazyvi.DefaultEstimators(), ","), "comma-separated estimator `names` (see 'vi estimators')")
	fs.IntVar(&o.check, "check", 0, checkUsage)
	fs.StringVar(&o.groups, "groups", "", "estimate `groups` of columns together: \"name=col,col;name=col,...\", onehot for columns sharing a prefix_, or rows, cols or patchRxC (patch2x2) of the --image")
	fs.StringVar(&o.groupsFile, "groups-file", "", "read groups from `file`, one \"name: col, col\" a line")
	fs.StringVar(&o.model, "model", "", "use the full models of this model `file` (vi train) instead of training; its backend, options, target, seed, split, folds and repetitions are the run's")
	fs.StringVar(&o.shard, "shard", "", "estimate the `K/N`-th slice of the features (vi merge combines the shards), or auto from a Slurm job array or a Kubernetes Indexed Job")
	fs.StringVar(&o.plot, "plot", "", "also draw a forest plot of the VIs and their intervals to this `file` (.png, .svg or .pdf)")
	fs.IntVar(&o.shardCount, "shard-count", 0, "with --shard auto, the number of shards `N` when the scheduler does not say (Kubernetes: the Job's completions)")
	cmd.Run = func(ctx context.Context, a *app, args []string) error { return o.run(ctx, a, cmd, args) }
	return cmd
}

// optionsFlag collects repeated --opt key=value.
type optionsFlag map[string]string

func (o optionsFlag) String() string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k+"="+o[k])
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (o optionsFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	if _, dup := o[k]; dup {
		return fmt.Errorf("option %q given twice", k)
	}
	o[k] = v
	return nil
}

func (o *estimateOptions) run(ctx context.Context, a *app, cmd *Command, args []string) (err error) {
	pf, err := o.preflight(ctx, cmd, args, o.data, o.fit)
	if err != nil {
		return err
	}
	set := pf.set
	if err := o.inf.Parse(); err != nil {
		return err
	}
	// A model file's folds, repetitions and train share are the run's, as
	// if given: its run is the one that trained it.
	var saved *dataio.SavedModel
	counts := set
	if o.model != "" {
		if saved, err = readModelFile(ctx, o.model); err != nil {
			return err
		}
		if counts, err = saved.UseCounts(&o.inf.CrossFit, &o.inf.Repeats, o.fit.trainFrac, set); err != nil {
			return err
		}
	}
	if err := o.data.checkLoadedInference(set, o.inf.CrossFit, o.inf.Repeats, o.inf.Ensemble); err != nil {
		return err
	}
	setting := inferflags.Setting{EvalGiven: o.data.evalFlagsGiven(), Pretrained: o.data.opts[pipeline.PretrainedOption] != "", TrainFrac: o.fit.trainFrac, Model: o.model}
	if err := o.inf.Defaults(counts, setting); err != nil {
		return err
	}
	iopt, err := o.inf.Options(set, o.fit.level)
	if err != nil {
		return err
	}
	if o.shardCount != 0 && o.shard != "auto" {
		return framework.Usagef("--shard-count goes with --shard auto (--shard K/N says the count itself)")
	}
	shard, err := pipeline.ParseShard(o.shard, o.shardCount, os.Getenv)
	if err != nil {
		return err
	}
	ests, err := o.fit.estimators(o.estimators)
	if err != nil {
		return err
	}
	check, err := o.checkOption(ests, !shard.Whole())
	if err != nil {
		return err
	}
	r, d, err := o.data.setup(ctx, a, set, func(r *dataRun) error {
		if saved == nil {
			return nil
		}
		return r.useModel(saved, set)
	})
	if err != nil {
		return err
	}
	cfg, err := o.config(r, d, saved, pf, ests)
	if err != nil {
		return err
	}
	id := newRunID(cmd, d, saved)
	eopt := pipeline.EstimateOptions{InferOptions: iopt, Workers: o.fit.workers, Shard: shard, RunID: mergeID(id), Check: check}
	// Every check that needs no model, before the backend starts.
	if err := pipeline.CheckRun(d, cfg, r.measure, eopt); err != nil {
		return err
	}
	return o.estimate(ctx, a, r, d, cfg, eopt, ests, id, pf)
}

// config is the run's configuration: the data's, the fit's, the model
// file's, the cross-fit, the repetitions and the groups.
func (o *estimateOptions) config(r *dataRun, d *dataio.Dataset, saved *dataio.SavedModel, pf *preflight, ests []framework.Estimator) (pipeline.Config, error) {
	groups := pf.groups
	if g := strings.ToLower(strings.TrimSpace(o.groups)); isImageGrouping(g) {
		var err error
		if groups, err = imageGroups(d, r.target, *o.data.options["image"], g); err != nil {
			return pipeline.Config{}, err
		}
	}
	cfg := r.config(nil)
	o.fit.config(&cfg)
	crossfit := o.inf.CrossFit
	if saved != nil {
		if err := pipeline.UseSaved(&cfg, &crossfit, saved, pf.set); err != nil {
			return pipeline.Config{}, err
		}
	}
	cfg.CrossFit, cfg.Repeats, cfg.Groups, cfg.OneHot = crossfit, o.inf.Repeats, groups, pf.onehot
	if pf.set["estimators"] {
		// Without it the backend may drop some (fittingDefaults); Run
		// checks again, before any fit, with those that run.
		cfg.MinTrain = pipeline.MinTrainFor(ests)
	}
	return cfg, nil
}

// estimate starts the backend (a built-in one in this process, a plugin
// in a subprocess), runs the estimators and writes the report and the
// figure.
func (o *estimateOptions) estimate(ctx context.Context, a *app, r *dataRun, d *dataio.Dataset, cfg pipeline.Config, eopt pipeline.EstimateOptions, ests []framework.Estimator, id *pipeline.RunID, pf *preflight) (err error) {
	prog := r.progress(strings.Join(pipeline.EstimatorNames(ests), "/"))
	defer prog.Close()
	be, closeBackend, err := r.open(ctx, prog)
	if err != nil {
		return err
	}
	defer keepErr(&err, closeBackend)
	var note string
	if !pf.set["estimators"] {
		// The default list, without what the backend cannot run.
		if ests, note, err = o.fittingDefaults(r.backend.name, be.Capabilities(), ests); err != nil {
			return err
		}
		if eopt.Check.K > 0 && ests[0].Name() == checkReference {
			return framework.Usagef("--check %d: backend %s cannot run %s, and %s estimates every feature already", o.check, r.backend.name, defaultFirst, checkReference)
		}
	}
	checked := ests
	if eopt.Check.K > 0 {
		checked = append(slices.Clone(ests), eopt.Check.Estimator)
	}
	if err := r.checkBackend(be, d, checked); err != nil {
		return err
	}
	if note != "" {
		prog.Clear()
		fmt.Fprintln(a.stderr, note)
		prog.SetLabel(strings.Join(pipeline.EstimatorNames(ests), "/"))
	}

	r.training(prog, d)
	cfg.Backend = be
	prog.SetRepetitions(o.inf.Repeats) // each repetition trains its full models first
	together := pipeline.TrainedTogether(cfg, ests, eopt.Workers)
	prog.SetTogether(together)  // ... the first ones side by side
	eopt.Progress = prog.Update // a nil *progress.Meter draws nothing
	// With --out, finished reductions are kept in OUT.partial as they
	// come, so that the same command resumes after a crash or an interrupt.
	ckpt, err := openCheckpoint(a, id, r.out, prog)
	if err != nil {
		return err
	}
	if ckpt != nil {
		eopt.Checkpoint = ckpt
	}
	if ckpt == nil || ckpt.Len() == 0 {
		// A resumed run's reductions come back at once: no forecast.
		checkJobs, models := forecastShape(cfg, eopt)
		eopt.Progress = progress.NewForecast(a.stderr, prog, o.inf.Repeats, together, checkJobs, models).Update
	}
	rep, err := pipeline.Run(ctx, d, cfg, r.measure, ests, eopt)
	prog.Clear()
	if err != nil {
		return ckpt.Finish(runError(ctx, err))
	}
	if rep.Full.Architecture == "" {
		rep.Full.Hidden = fullHidden(rep, be, r.opts)
	}
	flagmsg.Warnings(rep.Warnings)
	printWarnings(a.stderr, rep)

	var buf bytes.Buffer
	if err := report.Write(&buf, rep, r.format); err != nil {
		return err
	}
	// The report first: a plot that fails cannot cost the results.
	if err := r.emit(&buf); err != nil {
		return err
	}
	if err := ckpt.Finish(nil); err != nil {
		return err
	}
	return a.writePlot(o.plot, "forest plot", func(w io.Writer) error { return plot.Forest(rep, r.targetName(d)).Write(w, pf.plotFormat) })
}
