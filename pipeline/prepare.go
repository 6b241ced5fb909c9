package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// Config describes how to set up a Problem from a Dataset.
type Config struct {
	Target      string            // response column; "" means the last column
	Task        *framework.Task   // nil: inferred (InferTask)
	BackendName string            // for messages and the report
	Backend     framework.Backend // builds the full model and, for retrain, the reduced ones
	Options     map[string]string
	TrainFrac   float64 // share of rows in the train split; 0 means DefaultTrainFrac
	Seed        int64   // used as given: 0 is a seed like any other (vi's --seed defaults to 1)
	// MinTrain is the fewest rows the train split (with CrossFit, each
	// train set) must leave; below MinTrainRows means MinTrainRows. Run
	// raises it to what its estimators need (MinTrainFor), so that a split
	// too small for them fails before any model is trained, naming the data.
	MinTrain int

	// Partition, when set, says which rows train and which evaluate, one
	// label per row of the data: 0 for a row that only trains, k in 1..K
	// for a row of evaluation fold k, whose models learn from every row
	// not in fold k (standardisation statistics included). One fold is an
	// explicit train/evaluation split (WithEvalData joins a training and
	// an evaluation file so; SplitPartition reads a split column), K >= 2
	// a cross-fit the user defines. TrainFrac is then unused, CrossFit
	// must be 0 or K, and the seed still draws the networks and the order
	// the rows reach the backend in. Repeats repeat the training with other
	// seeds on the same rows.
	Partition []int
	// TrainedElsewhere says that a pre-trained full model (Options naming
	// PretrainedOption) was trained on none of the data's rows, so that
	// Run may judge it on a seeded split of them; without it, a
	// pre-trained network needs a Partition (its held-out rows).
	TrainedElsewhere bool

	// CrossFit >= 2 makes Run cross-fit: CrossFit folds, each in turn the
	// evaluation set of models trained on the others (PrepareFolds);
	// TrainFrac is then unused. 0 or 1: one train/evaluation split.
	CrossFit int
	// Repeats >= 2 makes Run repeat the split or the cross-fit with that
	// many seeds (RepeatSeed) and combine them (InferRepeated); 0 or 1: once.
	// With Saved, it must be the saved models' repetitions.
	Repeats int
	// Groups and OneHot choose the features Run estimates (see
	// ResolveFeatures); none means one feature per column.
	Groups []dataio.Group
	OneHot bool

	// Saved, when set, holds the full models of a model file (vi train,
	// TrainModel): Prepare and PrepareFolds load them instead of training
	// (and choosing among Candidates), Run each repetition's in its turn,
	// after checking that they were trained on this data with these
	// settings, so that the run gives exactly the numbers of the run that
	// trained them.
	Saved *dataio.SavedModel

	// Candidates, when given, are option settings that Prepare trains the
	// full model with (the first alone, then the others in parallel),
	// keeping the one its backend's validation slice scores best (see
	// selectFull; with cross-fitting the first fold chooses); retrain and
	// every other estimator then use the chosen one (Problem.Spec).
	// Baselines are scored beside the full model by Run (see Report.Full).
	Candidates []Candidate
	Baselines  []Baseline
	// Rivals are models of other kinds (vi: a linear model with a
	// cross-validated ridge) that the full model is chosen against:
	// Run and TrainModel fit each on the first repetition's folds and keep
	// the backend's model only where its out-of-fold loss (the task's
	// default measure) beats every rival's by more than the standard error
	// of the difference; otherwise the best rival becomes the full model
	// of every repetition, and its backend and options the run's
	// (Report.Full.Choice says which and why). Not with Saved or a
	// pre-trained full model.
	Rivals []Baseline

	// slots, when set, is what the full models' training takes its turns
	// from (PrepareFolds: one fold a slot), shared with the reductions of
	// the run that overlap it (Run); nil: workers folds at a time.
	slots *slots
}

// MinTrainRows is the fewest rows Prepare and PrepareFolds leave for
// training, whatever Config.MinTrain says.
const MinTrainRows = 6

// MaxRepeats bounds Config.Repeats.
const MaxRepeats = 1000

// TrainRower is the optional interface of an estimator that needs more
// train rows than MinTrainRows (lazy: two per cross-validation fold).
type TrainRower interface {
	MinTrainRows() int
}

// MinTrainFor returns the fewest train rows the estimators need: the
// largest of MinTrainRows and their TrainRowers' MinTrainRows.
func MinTrainFor(ests []framework.Estimator) int {
	n := MinTrainRows
	for _, e := range ests {
		if r, ok := e.(TrainRower); ok {
			n = max(n, r.MinTrainRows())
		}
	}
	return n
}

// Prepare splits the data set (seeded), standardises the features with
// train-split statistics and trains the full model once.
func Prepare(ctx context.Context, d *dataio.Dataset, cfg Config) (*framework.Problem, error) {
	sp, err := newSetup(d, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Backend == nil {
		return nil, framework.FieldErrorf("Config.Backend", "is nil: no backend to build the models")
	}
	if sp.folds >= 2 {
		return nil, framework.FieldErrorf("Config.Partition", "has %d evaluation folds: PrepareFolds cross-fits them, Prepare makes one split", sp.folds)
	}
	n1, _, err := sp.split()
	if err != nil {
		return nil, err
	}
	perm := sp.perm()
	if sp.folds > 0 {
		train, eval := partitionRows(cfg.Partition, perm, 1)
		return sp.problem(ctx, train, eval, 0)
	}
	return sp.problem(ctx, perm[:n1], perm[n1:], 0)
}

// perm is the seeded order of the rows that the splits and folds cut.
func (sp *setup) perm() []int {
	n, _ := sp.d.X.Dims()
	return rand.New(rand.NewPCG(uint64(sp.cfg.Seed), 0x5eed5b11)).Perm(n)
}

// foldBounds cuts n rows into k folds of nearly equal size: fold i is
// rows [bounds[i], bounds[i+1]) of the permutation.
func foldBounds(n, k int) []int {
	bounds := make([]int, k+1)
	for i := range bounds {
		bounds[i] = i * n / k
	}
	return bounds
}

// split returns the sizes of the train and evaluation splits of
// Config.TrainFrac, or an error when they are too small for the folds.
func (sp *setup) split() (n1, n2 int, err error) {
	n, _ := sp.d.X.Dims()
	if sp.folds > 0 {
		if n1, n2, err = sp.partitionSplit(); err != nil {
			return 0, 0, err
		}
		return n1, n2, sp.checkWide(n1)
	}
	frac := sp.cfg.TrainFrac
	if frac == 0 {
		frac = DefaultTrainFrac
	}
	if !(frac > 0 && frac < 1) {
		return 0, 0, framework.FieldErrorf("Config.TrainFrac", "must be in (0, 1), got %g", frac)
	}
	n1 = int(math.Round(frac * float64(n)))
	n2 = n - n1
	if n1 < sp.minTrain || n2 < 2 {
		return 0, 0, &dataio.InputError{File: sp.d.Source, Msg: fmt.Sprintf("%d rows are too few: a %.2f train split of %d rows leaves %d for training (need at least %d) and %d for evaluation (need at least 2)",
			n, frac, n, n1, sp.minTrain, n2)}
	}
	return n1, n2, sp.checkWide(n1)
}

// checkWide refuses a model of at least as many feature columns as its n1
// training rows: any p >= n1 columns (centred) span the n1 rows, so every
// feature is a linear combination of the others there and no reduced
// model, retrained or linearised, loses anything by dropping it; every
// importance would be noise, after a run whose time grows with the
// features (20 rows of 20000 features: hours).
func (sp *setup) checkWide(n1 int) error {
	if p := len(sp.featCols); p >= n1 {
		return &dataio.InputError{File: sp.d.Source, Msg: fmt.Sprintf("%d features and %d training rows: with at least as many features as training rows each feature is a linear combination of the others on those rows, so no importance can be estimated; give more rows than features, or fewer features", p, n1)}
	}
	return nil
}

// checkCrossFit reports k cross-fitting folds that are too many for the
// rows: each fold needs 2 evaluation rows and each train set (the other
// folds) 2 rows per tuning fold.
func (sp *setup) checkCrossFit(k int) error {
	if k < 2 {
		return framework.FieldErrorf("Config.CrossFit", "must be at least 2, got %d", k)
	}
	if sp.folds > 0 {
		return sp.checkPartitionFolds(k)
	}
	n, _ := sp.d.X.Dims()
	if n/k < 2 || n-(n+k-1)/k < sp.minTrain {
		return &dataio.InputError{File: sp.d.Source, Msg: fmt.Sprintf("%d rows are too few for %d cross-fitting folds (each fold needs 2 rows, each train set %d)",
			n, k, sp.minTrain)}
	}
	return sp.checkWide(n - (n+k-1)/k)
}

// ErrTooFewSplitRows marks the input error of CheckRun for a train/evaluation
// split that leaves split inference too few evaluation rows: more rows, a
// smaller Config.TrainFrac or Plain inference would do.
var ErrTooFewSplitRows = errors.New("too few evaluation rows for split inference")

// CheckRun makes, before any model is trained, every check of Run that
// needs no model: the data and its response (newSetup, CheckScale), the
// rows against the split, the tuning folds and the cross-fitting folds,
// the evaluation rows that split inference needs, the groups against the
// columns, the measure (nil: the task's default) against the task and
// against the evaluation rows it will score (checkScoredRows), the level,
// delta and perturbation, and the repetitions (a saved model's).
// Its errors are usage errors, *InputErrors where the data
// is at fault. cfg.Backend is not used: a caller may check before it
// starts a backend. Run calls it first.
func CheckRun(d *dataio.Dataset, cfg Config, m framework.Measure, opt EstimateOptions) error {
	if d != nil && d.X != nil {
		n, _ := d.X.Dims()
		var err error
		if cfg, err = withPartition(n, cfg); err != nil {
			return err
		}
	}
	if cfg.Repeats < 0 || cfg.Repeats > MaxRepeats {
		return framework.FieldErrorf("Config.Repeats", "must be from 1 to %d (0 means 1; each repetition trains its own models, and the combined standard error gains little past a few dozen), got %d", MaxRepeats, cfg.Repeats)
	}
	if opt.Ensemble && (cfg.CrossFit < 2 && cfg.Partition == nil || cfg.Repeats < 2) {
		return framework.FieldErrorf("EstimateOptions.Ensemble", "needs cross-fitting (at least 2 folds) or explicit evaluation rows (Config.Partition), repeated at least twice, got %d folds and %d repetitions", cfg.CrossFit, max(cfg.Repeats, 1))
	}
	if err := checkShard(opt); err != nil {
		return err
	}
	if (opt.Debias || opt.BiasAware) && !opt.Ensemble {
		return framework.FieldErrorf("EstimateOptions.Debias", "and BiasAware need the ensemble of repeated cross-fits (Ensemble)")
	}
	sp, err := newSetup(d, cfg)
	if err != nil {
		return err
	}
	if err := checkPretrained(d, cfg); err != nil {
		return err
	}
	if cfg.CrossFit >= 2 {
		// Every fold has at least 2 evaluation rows, which is what split
		// inference needs with several folds.
		if err := sp.checkCrossFit(cfg.CrossFit); err != nil {
			return err
		}
	} else {
		_, n2, err := sp.split()
		if err != nil {
			return err
		}
		if opt.Inference == inference.Split && n2 < inference.MinSplitRows {
			n, _ := d.X.Dims()
			return &dataio.InputError{File: d.Source, Err: ErrTooFewSplitRows,
				Msg: fmt.Sprintf("%d rows are too few: split inference needs at least %d evaluation rows (2 per half), the train split leaves %d",
					n, inference.MinSplitRows, n2)}
		}
	}
	units, err := dataio.ResolveUnits(sp.names, d.Units(), d.Names[sp.target], cfg.Groups, cfg.OneHot)
	if err != nil {
		return err
	}
	if err := checkCounts(opt, len(units)); err != nil {
		return err
	}
	if m == nil {
		var err error
		if m, err = framework.LookupMeasure(sp.task.DefaultMeasure()); err != nil {
			return opt.infer(cfg.Seed).Check() // no measures registered: nothing to check them with
		}
	}
	if !m.Supports(sp.task) {
		return &dataio.InputError{File: d.Source, Column: d.Names[sp.target], Msg: fmt.Sprintf("measure %s does not fit a %s response", m.Name(), sp.task)}
	}
	if err := sp.checkScoredRows(m, opt.Inference); err != nil {
		return err
	}
	return opt.infer(cfg.Seed).Check()
}

// checkScoredRows reports a set of evaluation rows on which the measure
// cannot score any model (auc on rows of one class, r2 on a constant
// response): the rows Infer scores the full and the reduced models on, for
// the seeded split or cross-fitting folds, are known before any model is
// trained. The measure's usage errors on placeholder predictions (the
// response itself for regression, equal class probabilities otherwise)
// tell.
func (sp *setup) checkScoredRows(m framework.Measure, inf inference.Inference) error {
	n, _ := sp.d.X.Dims()
	perm := sp.perm()
	var sets [][]int
	where := "the evaluation split"
	if sp.folds >= 2 {
		for f := 1; f <= sp.folds; f++ {
			_, eval := partitionRows(sp.cfg.Partition, perm, f)
			sets = append(sets, eval)
		}
		where = "an evaluation fold of the split column"
	} else if k := sp.cfg.CrossFit; k >= 2 {
		b := foldBounds(n, k)
		for i := 0; i < k; i++ {
			sets = append(sets, perm[b[i]:b[i+1]])
		}
		where = "a cross-fitting fold"
	} else {
		n1, _, err := sp.split()
		if err != nil {
			return err
		}
		eval := perm[n1:]
		if sp.folds > 0 {
			_, eval = partitionRows(sp.cfg.Partition, perm, 1)
			where = "the evaluation rows"
		}
		sets = [][]int{eval}
		if inf == inference.Split {
			half := (len(eval) + 1) / 2
			sets = [][]int{eval[:half], eval[half:]}
			where = "a half of " + where + " (split inference)"
		}
	}
	outs := 1
	if sp.task == framework.Multiclass {
		outs = sp.classes
	}
	for _, rows := range sets {
		y := make([]float64, len(rows))
		pred := mat.NewDense(len(rows), outs, nil)
		for i, r := range rows {
			y[i] = sp.d.X.At(r, sp.target)
			for c := 0; c < outs; c++ {
				switch sp.task {
				case framework.Regression:
					pred.Set(i, c, y[i])
				default:
					pred.Set(i, c, 1/float64(max(outs, 2)))
				}
			}
		}
		if _, err := m.Evaluate(y, pred); errors.Is(err, framework.ErrUsage) {
			return &dataio.InputError{File: sp.d.Source, Column: sp.d.Names[sp.target],
				Msg: fmt.Sprintf("%s (%d rows, seed %d): %v; use more rows, another seed or another measure", where, len(rows), sp.cfg.Seed, err)}
		}
	}
	return nil
}

// PrepareFolds cross-fits: it deals the rows (seeded) into k folds of
// nearly equal size and returns k Problems, the i-th evaluating on fold i
// with its full model trained (and its features standardised) on the other
// k-1 folds. The full models are trained Workers at a time (0: all CPUs).
// Config.TrainFrac is not used.
func PrepareFolds(ctx context.Context, d *dataio.Dataset, cfg Config, k, workers int) ([]*framework.Problem, error) {
	sp, err := newSetup(d, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Backend == nil {
		return nil, framework.FieldErrorf("Config.Backend", "is nil: no backend to build the models")
	}
	if err := sp.checkCrossFit(k); err != nil {
		return nil, err
	}
	n, _ := d.X.Dims()
	perm, bounds := sp.perm(), foldBounds(n, k)
	workers = min(workersOf(workers), k) // at most one fold a worker
	probs := make([]*framework.Problem, k)
	errs := make([]error, k)
	fold := func(i int) {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			return
		}
		var train, eval []int
		if sp.folds > 0 {
			train, eval = partitionRows(cfg.Partition, perm, i+1)
		} else {
			eval = perm[bounds[i]:bounds[i+1]]
			train = make([]int, 0, n-len(eval))
			train = append(append(train, perm[:bounds[i]]...), perm[bounds[i+1]:]...)
		}
		probs[i], errs[i] = sp.problem(ctx, train, eval, i)
		if errs[i] != nil {
			errs[i] = fmt.Errorf("fold %d: %w", i+1, errs[i])
		}
	}
	sl := cfg.slots
	if sl == nil {
		sl = newSlots(workers)
	}
	sp.cfg.slots = sl // the first fold's candidates train in its slots too
	first := 0
	if len(sp.cfg.Candidates) > 0 {
		// The first fold chooses among the candidates (its own fits run in
		// parallel); the other folds train its choice.
		if err := sl.do(ctx, func() error { fold(0); return errs[0] }); err != nil {
			return nil, err
		}
		sp.cfg.Options, sp.cfg.Candidates = probs[0].Spec.Options, nil
		first = 1
	}
	var wg sync.WaitGroup
	for i := first; i < k; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sl.do(ctx, func() error { fold(i); return nil }); err != nil {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			for _, p := range probs {
				if p != nil {
					p.Close()
				}
			}
			return nil, err
		}
	}
	return probs, nil
}

// setup is what Prepare and PrepareFolds check and derive before splitting.
type setup struct {
	d        *dataio.Dataset
	cfg      Config
	task     framework.Task
	classes  int // K for Multiclass, else 0
	target   int
	names    []string
	featCols []int
	minTrain int
	folds    int // the folds of Config.Partition; 0 without one
	// hasMissing says that the data has cells to impute (NaN features of
	// an encoded data set).
	hasMissing bool
}

func newSetup(d *dataio.Dataset, cfg Config) (*setup, error) {
	if d == nil || d.X == nil {
		return nil, framework.Usagef("no data")
	}
	_, cols := d.X.Dims()
	if cols < 2 {
		return nil, &dataio.InputError{File: d.Source, Msg: fmt.Sprintf("need a response and at least one feature, found %d column(s)", cols)}
	}
	target := cols - 1
	if cfg.Target != "" {
		var err error
		if target, err = d.Column(cfg.Target); err != nil {
			return nil, err
		}
	}
	if err := d.CheckScale(target); err != nil {
		return nil, err
	}
	y := mat.Col(nil, target, d.X)
	if isConstant(y) {
		return nil, &dataio.InputError{File: d.Source, Column: d.Names[target], Msg: fmt.Sprintf("the response is constant (%g in every row)", y[0])}
	}
	if cfg.Task == nil {
		if err := checkEvalLabels(d, target, y, cfg.Partition); err != nil {
			return nil, err
		}
	}
	task := InferTask(y)
	if cfg.Task != nil {
		task = *cfg.Task
		if task == framework.Binary && InferTask(y) != framework.Binary {
			return nil, &dataio.InputError{File: d.Source, Column: d.Names[target], Msg: "task binary needs a 0/1 response"}
		}
	}
	classes := 0
	if task == framework.Multiclass {
		k, err := NumClasses(y)
		if err != nil {
			return nil, &dataio.InputError{File: d.Source, Column: d.Names[target], Msg: "task multiclass: " + err.Error()}
		}
		classes = k
	}
	folds, err := partitionFolds(len(y), cfg)
	if err != nil {
		return nil, err
	}
	if folds >= 2 {
		cfg.CrossFit = folds
	}
	sp := &setup{d: d, cfg: cfg, task: task, classes: classes, target: target, minTrain: max(cfg.MinTrain, MinTrainRows), folds: folds}
	for j := 0; j < cols; j++ {
		if j != target {
			sp.names = append(sp.names, d.Names[j])
			sp.featCols = append(sp.featCols, j)
		}
	}
	if d.Encoding != nil {
		for _, c := range d.Encoding.Columns {
			sp.hasMissing = sp.hasMissing || c.Missing != ""
		}
	}
	if cfg.Saved != nil {
		// Before any model is made: a backend that cannot load saved
		// models is given none of the file's.
		if cfg.Backend != nil && !cfg.Backend.Capabilities().Persist {
			return nil, framework.Usagef("backend %s cannot load saved models", cfg.Saved.Backend)
		}
		if err := checkSavedPartition(cfg.Saved, cfg); err != nil {
			return nil, err
		}
		if err := checkSaved(cfg.Saved, d, cfg); err != nil {
			return nil, err
		}
		if err := checkSavedSetup(cfg.Saved, sp); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// problem standardises the rows and trains the full model on train.
// With Config.Saved, it loads the fold's saved model instead of training.
func (sp *setup) problem(ctx context.Context, train, eval []int, fold int) (*framework.Problem, error) {
	cfg := sp.cfg
	xtr, ytr := rowsOf(sp.d.X, train, sp.featCols, sp.target)
	xev, yev := rowsOf(sp.d.X, eval, sp.featCols, sp.target)
	// An encoded data set's missing cells and unseen categories, fitted on
	// the train rows only.
	fill, err := sp.d.Encoding.FitFill(sp.d.Source, sp.names, xtr)
	if err != nil {
		return nil, err
	}
	fill.Apply(xtr)
	fill.Apply(xev)
	var fillValues []float64
	if fill != nil && sp.hasMissing {
		fillValues = fill.Values
	}
	means, sds := standardise(xtr, xev)

	spec := framework.ModelSpec{Task: sp.task, Inputs: len(sp.featCols), Seed: cfg.Seed, Options: cfg.Options, Classes: sp.classes}
	var sel *selection
	if cfg.Saved != nil {
		// The saved state is the full model's, loaded into a model built
		// as the others are: a pretrained network's weights are in it.
		sel, err = loadSaved(ctx, cfg, othersSpec(spec), fold, fitted{means, sds, fillValues})
	} else {
		if sel, err = selectFull(ctx, cfg.Backend, pretrainedSpec(spec), cfg.Candidates, xtr, ytr, cfg.slots); err == nil {
			sel.spec = othersSpec(sel.spec)
			sel.spec.Options = withTuned(sel.spec.Options, sel.model)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("full model: %w", err)
	}
	full := sel.model
	p := &framework.Problem{
		Task: sp.task, BackendName: cfg.BackendName, Backend: cfg.Backend, Spec: sel.spec,
		FeatureNames: sp.names, XTrain: xtr, XEval: xev, YTrain: ytr, YEval: yev, EvalRows: append([]int(nil), eval...),
		Full: full, Seed: cfg.Seed, Classes: sp.classes, Means: means, SDs: sds, Fill: fillValues,
		Chosen: sel.chosen, Candidates: sel.scores, Selection: sel.note, FitReport: framework.FitReportOf(full),
	}
	if p.FullEval, err = full.Predict(ctx, xev); err != nil {
		framework.Release(full)
		return nil, fmt.Errorf("full model, predict evaluation split: %w", err)
	}
	if r, c := p.FullEval.Dims(); r != len(eval) || c != p.Outputs() {
		framework.Release(full)
		return nil, fmt.Errorf("full model, predict evaluation split: backend returned %d x %d predictions for %d rows, want %d x %d", r, c, len(eval), len(eval), p.Outputs())
	}
	if err := sp.checkFinite(p.FullEval, eval); err != nil {
		framework.Release(full)
		return nil, err
	}
	return p, nil
}

// checkFinite refuses full-model predictions that are NaN or infinite,
// naming the first one's row in its file, before any reduction or score
// is built on them.
func (sp *setup) checkFinite(pred *mat.Dense, rows []int) error {
	r, c := pred.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if v := pred.At(i, j); math.IsNaN(v) || math.IsInf(v, 0) {
				file, row := sp.d.Locate(rows[i])
				return fmt.Errorf("full model: its prediction for row %d of %s is %v: %w: the network computes NaN or Inf on that row (in a module's forward pass, or with weights that diverged in training: a smaller learning rate may help)",
					row, file, v, framework.ErrNonFinite)
			}
		}
	}
	return nil
}

func isConstant(y []float64) bool {
	for _, v := range y[1:] {
		if v != y[0] {
			return false
		}
	}
	return true
}

func rowsOf(x *mat.Dense, rows, cols []int, target int) (*mat.Dense, []float64) {
	out := mat.NewDense(len(rows), len(cols), nil)
	y := make([]float64, len(rows))
	for i, r := range rows {
		for k, c := range cols {
			out.Set(i, k, x.At(r, c))
		}
		y[i] = x.At(r, target)
	}
	return out, y
}

// standardise centres and scales the columns of train and eval with the
// train split's mean and standard deviation (a constant column is only
// centred).
func standardise(train, eval *mat.Dense) (means, sds []float64) {
	_, p := train.Dims()
	r, _ := train.Dims()
	col := make([]float64, r)
	for j := 0; j < p; j++ {
		mat.Col(col, j, train)
		mean, sd := stat.MeanStdDev(col, nil)
		if !(sd > 0) {
			sd = 1
		}
		means, sds = append(means, mean), append(sds, sd)
		for _, x := range []*mat.Dense{train, eval} {
			r, _ := x.Dims()
			for i := 0; i < r; i++ {
				x.Set(i, j, (x.At(i, j)-mean)/sd)
			}
		}
	}
	return means, sds
}

// DefaultTrainFrac is the share of rows in the train split
// (Config.TrainFrac). A zero field of Config, EstimateOptions or
// InferOptions means its default, and vi's flags default to the same
// values, so that a library run with zero settings is vi's run without
// flags (except the seed: Config.Seed is used as given, and vi's --seed
// defaults to 1).
const DefaultTrainFrac = 2.0 / 3.0
