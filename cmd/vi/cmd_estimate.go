package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/backends/cnn"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/plot"
)

// estimateOptions are the flags of vi estimate.
type estimateOptions struct {
	data       *dataFlags
	fit        *fitFlags
	estimators string
	groups     string
	groupsFile string
	inference  string
	crossfit   int
	repeats    int
	perturb    float64
	ensemble   bool
	debias     bool
	biasAware  bool
	twoSided   bool
	scoreUpper bool
	delta      float64
	test       string
	adjust     string
	ciTruncate bool
	// A model file of vi train, and the shard of the features to estimate.
	model      string
	shard      string
	shardCount int
	plot       string // --plot: the forest plot's file
}

func newEstimateCommand() *Command {
	var o estimateOptions
	cmd := &Command{
		UsageLine: "estimate [--data FILE] [--target COL] [--estimators LIST] [--measure NAME] [flags]",
		Short:     "estimate variable importance from a CSV file",
		Long: `Estimate trains the full model, then estimates each feature's variable
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

Estimators (--estimators, comma-separated, in output order):
  lazy     LazyVI: the full network shifted by a ridge regression on its own
           gradients; its penalty per feature by K-fold CV (--folds) unless
           --lambda fixes it. The lambda column shows the penalty chosen, "inf"
           when no update was best (the reduced model is then dropout's,
           scored against lazy's baseline).
  dropout  the full model with the feature set to its mean (biased up for
           correlated features).
  retrain  a new model trained without the feature (the reference).
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
serves a network in a Python session's memory; docs/python.md). For the
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

Output goes to stdout, or with --out FILE to FILE, replaced atomically and only
when the whole run succeeds. --format json is a stable contract (see docs/json.md).
--plot FILE.png, .svg or .pdf draws a forest plot: a row per feature, the most
important at the top, each estimator's VI and interval.

Progress goes to stderr (--progress): a bar when stderr is a terminal, whatever
stdout and --format are; a plain line every 30 s when it is a file or a pipe.

Exit codes: 0 success, 2 bad usage or bad input, 1 anything else.`,
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
	fs.StringVar(&o.estimators, "estimators", strings.Join(lazyvi.DefaultEstimators(), ","), "comma-separated estimator `names` (see 'vi estimators')")
	fs.StringVar(&o.groups, "groups", "", "estimate `groups` of columns together: \"name=col,col;name=col,...\", onehot for columns sharing a prefix_, or rows, cols or patchRxC (patch2x2) of the --image")
	fs.StringVar(&o.groupsFile, "groups-file", "", "read groups from `file`, one \"name: col, col\" a line")
	fs.StringVar(&o.inference, "inference", "auto", "`inference`: split (full and reduced models scored on different halves), plain (both on the same rows: the paired estimate) or perturbed (paired, with seeded noise); auto: plain with --debias on the ensemble, else split")
	fs.IntVar(&o.crossfit, "crossfit", 0, "cross-fit with `K` folds (0: one train/evaluation split, --train-frac; 3 with --ensemble, the default)")
	fs.IntVar(&o.repeats, "repeats", 1, "repeat the split or cross-fit `M` times with other seeds and combine them (1: once; 3 with --ensemble, the default)")
	fs.BoolVar(&o.ensemble, "ensemble", true, "average each row's out-of-fold predictions (every model's; permute's estimates instead) over the repetitions of the cross-fit and infer once from the averages (--crossfit 3 --repeats 3 unless given); on unless --train-frac, --crossfit 0 or --repeats 1 is given (or a --model of one split or one repetition)")
	fs.BoolVar(&o.debias, "debias", true, "extrapolate the ensemble's paired estimate (plain or perturbed) to infinitely many repetitions, from the difference between the ensemble's estimate and the repetitions' own; on for them unless --debias=false")
	fs.BoolVar(&o.scoreUpper, "score-upper", true, "with the paired estimate (plain or perturbed) and mse or r2, take each interval's upper end from the standard error the estimate would have there (it grows with the VI); on for them unless --score-upper=false, which gives the symmetric interval")
	fs.BoolVar(&o.biasAware, "bias-aware", true, "widen each interval by a bound on the ensemble's remaining bias (the size of --debias's correction), on the side the correction came from, and take the p-value that agrees with it; on with --debias unless --bias-aware=false")
	fs.BoolVar(&o.twoSided, "bias-two-sided", false, "with --bias-aware, widen both ends of each interval by the bound")
	fs.Float64Var(&o.perturb, "perturb", inference.DefaultPerturb, "perturbed inference: the noise's sd `rho` in units of the full model's influence sd (lazy's and lazy-es's: their baseline's)")
	fs.Float64Var(&o.delta, "delta", 0, "p_value tests H0: VI <= `delta`")
	fs.StringVar(&o.test, "test", "covariance", "where p_value comes from: `test` estimate (the VI estimate's own test, which agrees with its interval) or covariance (for cpi, whose reduced model is the full model's conditional mean: a test of H0 VI = 0 by the covariance between the reduced model's residual and the full model's departure from it, with more power; with the paired estimate, mse, r2 or logloss and --delta 0; other estimators keep estimate)")
	fs.StringVar(&o.adjust, "adjust", "none", "adjust each estimator's p-values: `method` holm, bh or none")
	fs.BoolVar(&o.ciTruncate, "ci-truncate", false, "floor the intervals at 0")
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
	if err := noArgs(cmd, args); err != nil {
		return err
	}
	set := givenFlags(cmd)

	// Everything that can be checked without the data or the backend.
	if err := o.data.checkOutput(fileFlag{"--plot", o.plot}); err != nil {
		return err
	}
	plotFormat, err := checkPlot(o.plot, o.data.out)
	if err != nil {
		return err
	}
	if err := o.data.checkNotInput([]fileFlag{{"--plot", o.plot}}, fileFlag{"--groups-file", o.groupsFile}, fileFlag{"--model", o.model}); err != nil {
		return err
	}
	if o.data.data == dataio.Stdin && o.groupsFile == dataio.Stdin {
		return framework.Usagef("--data - and --groups-file - cannot both read standard input")
	}
	if err := o.fit.check(); err != nil {
		return err
	}
	autoInference := strings.EqualFold(strings.TrimSpace(o.inference), "auto")
	method := inference.Split
	if !autoInference {
		var err error
		if method, err = inference.ParseInference(o.inference); err != nil {
			return err
		}
	}
	adjust, err := inference.ParseAdjust(o.adjust)
	if err != nil {
		return err
	}
	test, err := inference.ParseTest(o.test)
	if err != nil {
		return err
	}
	if math.IsNaN(o.delta) || math.IsInf(o.delta, 0) {
		return framework.Usagef("--delta must be a finite number, got %g", o.delta)
	}
	if o.crossfit < 0 || o.crossfit == 1 {
		return framework.Usagef("--crossfit must be 0 (no cross-fitting) or at least 2, got %d", o.crossfit)
	}
	// A model file's folds, repetitions and train share are the run's, as
	// if given: its run is the one that trained it.
	var saved *dataio.SavedModel
	counts := set
	if o.model != "" {
		if saved, err = readModelFile(ctx, o.model); err != nil {
			return err
		}
		if counts, err = o.modelCounts(saved, set); err != nil {
			return err
		}
	}
	if err := o.data.checkLoadedInference(set, o.crossfit, o.repeats, o.ensemble); err != nil {
		return err
	}
	if err := o.defaultInference(counts); err != nil {
		return err
	}
	if o.crossfit >= 2 && set["train-frac"] {
		return framework.Usagef("--train-frac and --crossfit exclude each other (cross-fitting evaluates every fold in turn)")
	}
	if err := o.checkRepeats(); err != nil {
		return err
	}
	if autoInference && o.ensemble {
		method = inference.Plain // lazyvi.EnsembleDefault's
	}
	paired := o.ensemble && method != inference.Split
	if !set["debias"] {
		o.debias = paired
	}
	if !set["bias-aware"] {
		o.biasAware = o.debias
	}
	if o.twoSided && !o.biasAware {
		return framework.Usagef("--bias-two-sided goes with --bias-aware")
	}
	if !set["score-upper"] {
		o.scoreUpper = method != inference.Split
	}
	if o.scoreUpper && method == inference.Split {
		return framework.Usagef("--score-upper needs the paired estimate (--inference plain or perturbed, or auto on the ensemble)")
	}
	if (o.debias || o.biasAware) && !paired {
		return framework.Usagef("--debias and --bias-aware need the ensemble (--ensemble, the default) with --inference plain or perturbed: they correct the paired estimate of averaged predictions")
	}
	groups, onehot, err := groupFlags(ctx, o.groups, o.groupsFile)
	if err != nil {
		return err
	}
	if o.shardCount != 0 && o.shard != "auto" {
		return framework.Usagef("--shard-count goes with --shard auto (--shard K/N says the count itself)")
	}
	shard, err := parseShard(o.shard, o.shardCount, os.Getenv)
	if err != nil {
		return err
	}
	ests, err := o.fit.estimators(o.estimators)
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

	// What can be checked with the data before a backend starts.
	if g := strings.ToLower(strings.TrimSpace(o.groups)); isImageGrouping(g) {
		if groups, err = imageGroups(d, r.target, *o.data.options["image"], g); err != nil {
			return err
		}
	}
	cfg := r.config(nil)
	o.fit.config(&cfg)
	crossfit := o.crossfit
	if saved != nil {
		if err := o.fit.useModel(&cfg, &crossfit, saved, set); err != nil {
			return err
		}
	}
	cfg.CrossFit, cfg.Repeats, cfg.Groups, cfg.OneHot = crossfit, o.repeats, groups, onehot
	id := newRunID(cmd, d, saved)
	if set["estimators"] {
		// Without it the backend may drop some (fittingEstimators); Run
		// checks again, before any fit, with those that run.
		cfg.MinTrain = pipeline.MinTrainFor(ests)
	}
	eopt := pipeline.EstimateOptions{
		InferOptions: inference.InferOptions{
			Inference:    method,
			Level:        o.fit.level,
			Perturb:      o.perturb,
			Ensemble:     o.ensemble,
			Debias:       o.debias,
			BiasAware:    o.biasAware,
			DirectedBias: o.biasAware && !o.twoSided,
			ScoreUpper:   o.scoreUpper,
			Delta:        o.delta,
			Test:         test,
			Adjust:       adjust,
			CITruncate:   o.ciTruncate,
		},
		Workers:  o.fit.workers,
		Progress: nil, // set once the progress bar exists

		Shard: shard,
		RunID: id.merge(),
	}
	// Every check that needs no model, before the backend starts.
	if err := pipeline.CheckRun(d, cfg, r.measure, eopt); err != nil {
		return err
	}

	// The backend: a built-in one in this process, a plugin in a
	// subprocess.
	prog := r.progress(strings.Join(estimatorNames(ests), "/"))
	defer prog.Close()
	be, closeBackend, err := r.open(ctx, prog)
	if err != nil {
		return err
	}
	defer keepErr(&err, closeBackend)
	var note string
	if !set["estimators"] {
		// The default list, without what the backend cannot run.
		ests, note = fittingEstimators(r.backend.name, be.Capabilities(), ests)
	}
	if err := r.checkBackend(be, d, ests); err != nil {
		return err
	}
	if note != "" {
		prog.Clear()
		fmt.Fprintln(a.stderr, note)
		prog.SetLabel(strings.Join(estimatorNames(ests), "/"))
	}

	r.training(prog, d)
	cfg.Backend = be
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
		eopt.Progress = newForecast(a.stderr, prog, o.repeats).update
	}
	rep, err := pipeline.Run(ctx, d, cfg, r.measure, ests, eopt)
	prog.Clear()
	if err != nil {
		return finishCheckpoint(ckpt, r.out, runError(ctx, err))
	}
	if rep.Full.Architecture == "" {
		rep.Full.Hidden = fullHidden(rep, be, r.opts)
	}
	flagWarnings(rep.Warnings)
	printWarnings(a.stderr, rep)

	var buf bytes.Buffer
	if err := writeReport(&buf, rep, r.format); err != nil {
		return err
	}
	// The report first: a plot that fails cannot cost the results.
	if err := r.emit(&buf); err != nil {
		return err
	}
	if err := finishCheckpoint(ckpt, r.out, nil); err != nil {
		return err
	}
	return a.writePlot(o.plot, "forest plot", func(w io.Writer) error { return plot.Forest(rep, r.targetName(d)).Write(w, plotFormat) })
}

// checkRepeats checks --repeats and --perturb: at least one repetition and
// a positive, finite rho.
func (o *estimateOptions) checkRepeats() error {
	if o.repeats < 1 {
		return framework.Usagef("--repeats must be at least 1, got %d", o.repeats)
	}
	if !(o.perturb > 0) || math.IsInf(o.perturb, 0) {
		return framework.Usagef("--perturb must be a positive number, got %g", o.perturb)
	}
	return nil
}

// defaultInference sets --ensemble, --crossfit and --repeats where the
// flags leave them to vi's default inference, by the library's rule
// (lazyvi.InferenceDefaults) on the settings the flags give (set; a model
// file's counts among them, modelCounts): unless a flag asks for one split
// or one seed (--train-frac, --crossfit 0, --repeats 1), the cross-fit is
// repeated and its predictions ensembled, lazyvi.DefaultCrossFit folds and
// DefaultRepeats repetitions unless given. --ensemble=false keeps the
// counts given.
func (o *estimateOptions) defaultInference(set map[string]bool) error {
	if set["ensemble"] && !o.ensemble {
		return nil
	}
	if o.data.opts[pipeline.PretrainedOption] != "" {
		o.ensemble = false // one loaded network, judged once (InferenceDefaults)
		return nil
	}
	var cfg pipeline.Config
	if o.data.evalFlagsGiven() {
		// The rule asks only whether the evaluation rows are given; their
		// folds are the partition's.
		cfg.Partition = []int{}
	}
	var opt pipeline.EstimateOptions
	opt.Ensemble = set["ensemble"]
	if set["train-frac"] {
		cfg.TrainFrac = o.fit.trainFrac
	}
	if set["crossfit"] {
		cfg.CrossFit = max(o.crossfit, 1) // --crossfit 0, one split, is the library's CrossFit 1
	}
	if set["repeats"] {
		cfg.Repeats = o.repeats
	}
	lazyvi.InferenceDefaults(&cfg, &opt)
	if o.ensemble = opt.Ensemble; !o.ensemble {
		return nil
	}
	// --ensemble alone is the setting vi bench coverage studies. What
	// excludes it says so in terms of the flags given.
	switch {
	case set["train-frac"] && !set["crossfit"]:
		return framework.Usagef("--ensemble and --train-frac exclude each other (--ensemble cross-fits: every fold is evaluated in turn)")
	case o.model != "" && (o.crossfit < 2 && !o.data.evalFlagsGiven() || o.repeats < 2):
		return framework.Usagef("--ensemble needs a model file of repeated cross-fits (vi train's default); %s holds %s", o.model, modelCountsString(o.crossfit, o.repeats))
	}
	if !set["crossfit"] {
		o.crossfit = cfg.CrossFit
	}
	if !set["repeats"] {
		o.repeats = cfg.Repeats
	}
	return nil
}

// groupFlags reads --groups and --groups-file ("-": standard input):
// explicit groups, and whether to group one-hot columns.
func groupFlags(ctx context.Context, spec, file string) ([]dataio.Group, bool, error) {
	var groups []dataio.Group
	onehot := false
	switch g := strings.TrimSpace(spec); {
	case g == "":
	case strings.EqualFold(g, "onehot"):
		onehot = true
	case isImageGrouping(g):
		// imageGroups builds them once the data's columns are known.
	default:
		gs, err := dataio.ParseGroups(g)
		if err != nil {
			return nil, false, framework.Usagef("--groups: %w", err)
		}
		groups = gs
	}
	if file != "" {
		gs, err := dataio.LoadGroups(ctx, file)
		if err != nil {
			return nil, false, runError(ctx, err)
		}
		groups = append(groups, gs...)
	}
	return groups, onehot, nil
}

// isImageGrouping reports whether the --groups value g is one of the
// groupings of an image's pixels: rows, cols or patchRxC.
func isImageGrouping(g string) bool {
	g = strings.ToLower(g)
	return g == "rows" || g == "cols" || strings.HasPrefix(g, "patch")
}

// imageGroups returns one group per pixel row ("row0", ...), column
// ("col0", ...) or RxC patch (by "patchRxC": "p0_0", "p0_1", ..., the
// patches tiling the image row by row from the top left, those at the
// right and bottom edges smaller where R or C does not divide the image)
// of the HxW image (--image) whose pixels are the data's features in
// row-major order.
func imageGroups(d *dataio.Dataset, target, image, by string) ([]dataio.Group, error) {
	h, w, err := cnn.ParseImage(image) // H*W bounded, without overflow
	if image == "" || err != nil {
		return nil, framework.Usagef("--groups %s needs --image HxW (the features are the pixels of an image, at most %d), got --image %q", by, cnn.MaxPixels, image)
	}
	var ph, pw int
	if strings.HasPrefix(by, "patch") {
		if n, err := fmt.Sscanf(by, "patch%dx%d", &ph, &pw); err != nil || n != 2 || ph < 1 || pw < 1 || ph > h || pw > w || by != fmt.Sprintf("patch%dx%d", ph, pw) {
			return nil, framework.Usagef("--groups %s: want patchRxC with 1 <= R <= %d and 1 <= C <= %d (the --image is %dx%d), e.g. patch2x2", by, h, w, h, w)
		}
	}
	j := len(d.Names) - 1
	if target != "" {
		var err error
		if j, err = d.Column(target); err != nil {
			return nil, err
		}
	}
	var feats []string
	for k, n := range d.Names {
		if k != j {
			feats = append(feats, n)
		}
	}
	if len(feats) != h*w {
		return nil, framework.Usagef("--groups %s: --image %dx%d has %d pixels but %s has %d features", by, h, w, h*w, d.Source, len(feats))
	}
	if ph > 0 {
		return dataio.ImagePatches(feats, h, w, ph, pw), nil
	}
	outer, inner, name := h, w, "row"
	if by == "cols" {
		outer, inner, name = w, h, "col"
	}
	groups := make([]dataio.Group, outer)
	for a := 0; a < outer; a++ {
		groups[a].Name = fmt.Sprintf("%s%d", name, a)
		for b := 0; b < inner; b++ {
			pix := a*w + b // row a, column b
			if by == "cols" {
				pix = b*w + a // row b, column a
			}
			groups[a].Columns = append(groups[a].Columns, feats[pix])
		}
	}
	return groups, nil
}

func rows(d *dataio.Dataset) int {
	r, _ := d.X.Dims()
	return r
}

// lookupEstimators resolves a comma-separated list of estimator names.
func lookupEstimators(list string) ([]framework.Estimator, error) {
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

func estimatorNames(ests []framework.Estimator) []string {
	out := make([]string, len(ests))
	for i, e := range ests {
		out[i] = e.Name()
	}
	return out
}

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
				if ok, _ := framework.Fits(e, caps); ok {
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

// backendSpec says which backend to run and how.
type backendSpec struct {
	name   string // for messages and the report
	plugin string // external executable; "" for a built-in backend
	// attach is the handshake line of a backend a running process serves
	// (--plugin-attach); "" to start or run one.
	attach string
	// process serves a built-in backend from a subprocess, as a plugin
	// is served (--backend-process); without it a built-in backend runs
	// in vi's own process.
	process bool
	// startTimeout bounds the plugin handshake (--plugin-timeout); 0:
	// backendplugin's default.
	startTimeout time.Duration
}

// external reports whether the backend is not one built into vi: a
// plugin's, or an attached one.
func (s backendSpec) external() bool { return s.plugin != "" || s.attach != "" }

// attachSpec is the backendSpec of --plugin-attach line: named by --backend
// when given (set), else "plugin"; it excludes --plugin and
// --backend-process, which say how to start a backend.
func attachSpec(line, name string, set map[string]bool) (backendSpec, error) {
	for _, f := range []string{"plugin", "backend-process"} {
		if set[f] {
			return backendSpec{}, framework.Usagef("--plugin-attach and --%s exclude each other (--plugin-attach uses a backend that is already served)", f)
		}
	}
	if !set["backend"] {
		name = "plugin"
	}
	return backendSpec{name: name, attach: strings.TrimSpace(line)}, nil
}

// newBackendSpec checks the backend flags: a built-in name must be
// registered, a plugin must exist and be executable.
func newBackendSpec(name string, nameSet bool, plugin string) (backendSpec, error) {
	if plugin == "" {
		if _, err := framework.LookupBackend(name); err != nil {
			return backendSpec{}, err
		}
		return backendSpec{name: name}, nil
	}
	fi, err := os.Stat(plugin)
	if err != nil && !strings.ContainsRune(plugin, filepath.Separator) {
		// A bare name that is no file here: an executable on PATH, as a
		// shell finds it (--plugin lazyvi-torch).
		found, lookErr := exec.LookPath(plugin)
		if lookErr != nil {
			return backendSpec{}, framework.Usagef("--plugin %s: no such file here, and no executable of that name on PATH", plugin)
		}
		plugin = found
		fi, err = os.Stat(plugin)
	}
	switch {
	case err != nil:
		return backendSpec{}, framework.Usagef("--plugin %s: no such file", plugin)
	case fi.IsDir():
		return backendSpec{}, framework.Usagef("--plugin %s: is a directory, want an executable", plugin)
	case fi.Mode()&0o111 == 0:
		return backendSpec{}, framework.Usagef("--plugin %s: not executable", plugin)
	}
	if !nameSet {
		name = filepath.Base(plugin)
	}
	abs, err := filepath.Abs(plugin)
	if err != nil {
		return backendSpec{}, err
	}
	return backendSpec{name: name, plugin: abs}, nil
}
