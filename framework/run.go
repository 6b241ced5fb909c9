package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// Config describes how to set up a Problem from a Dataset.
type Config struct {
	Target      string  // response column; "" means the last column
	Task        *Task   // nil: inferred (InferTask)
	BackendName string  // for messages and the report
	Backend     Backend // builds the full model and, for retrain, the reduced ones
	Options     map[string]string
	TrainFrac   float64 // share of rows in the train split; 0 means DefaultTrainFrac
	Seed        int64   // used as given: 0 is a seed like any other (vi's --seed defaults to 1)
	// MinTrain is the fewest rows the train split (with CrossFit, each
	// train set) must leave; below MinTrainRows means MinTrainRows. Run
	// raises it to what its estimators need (MinTrainFor), so that a split
	// too small for them fails before any model is trained, naming the data.
	MinTrain int

	// CrossFit >= 2 makes Run cross-fit: CrossFit folds, each in turn the
	// evaluation set of models trained on the others (PrepareFolds);
	// TrainFrac is then unused. 0 or 1: one train/evaluation split.
	CrossFit int
	// Repeats >= 2 makes Run repeat the split or the cross-fit with that
	// many seeds (RepeatSeed) and combine them (InferRepeated); 0 or 1: once.
	// It cannot be combined with Saved, whose models are one seed's.
	Repeats int
	// Groups and OneHot choose the features Run estimates (see
	// ResolveFeatures); none means one feature per column.
	Groups []Group
	OneHot bool

	// Saved, when set, holds the full models of a model file (vi train):
	// Prepare and PrepareFolds load them instead of training (and choosing
	// among Candidates), after checking that they were trained on this data
	// with these settings (Saved.Check), so that the run gives exactly the
	// numbers of the run that trained them.
	Saved *SavedModel

	// Candidates, when given, are option settings that Prepare trains the
	// full model with (the first alone, then the others in parallel),
	// keeping the one its backend's validation slice scores best (see
	// selectFull; with cross-fitting the first fold chooses); retrain and
	// every other estimator then use the chosen one (Problem.Spec).
	// Baselines are scored beside the full model by Run (see Report.Full).
	Candidates []Candidate
	Baselines  []Baseline
}

// MinTrainRows is the fewest rows Prepare and PrepareFolds leave for
// training, whatever Config.MinTrain says.
const MinTrainRows = 6

// TrainRower is the optional interface of an estimator that needs more
// train rows than MinTrainRows (lazy: two per cross-validation fold).
type TrainRower interface {
	MinTrainRows() int
}

// MinTrainFor returns the fewest train rows the estimators need: the
// largest of MinTrainRows and their TrainRowers' MinTrainRows.
func MinTrainFor(ests []Estimator) int {
	n := MinTrainRows
	for _, e := range ests {
		if r, ok := e.(TrainRower); ok {
			n = max(n, r.MinTrainRows())
		}
	}
	return n
}

// InferTask returns Binary when every response is 0 or 1, Multiclass when
// the responses are class labels by the rule of IsClassLabels, else
// Regression.
func InferTask(y []float64) Task {
	for _, v := range y {
		if v != 0 && v != 1 {
			if IsClassLabels(y) {
				return Multiclass
			}
			return Regression
		}
	}
	return Binary
}

// Prepare splits the data set (seeded), standardises the features with
// train-split statistics and trains the full model once.
func Prepare(ctx context.Context, d *Dataset, cfg Config) (*Problem, error) {
	sp, err := newSetup(d, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Backend == nil {
		return nil, fieldErrorf("Config.Backend", "is nil: no backend to build the models")
	}
	n1, _, err := sp.split()
	if err != nil {
		return nil, err
	}
	perm := sp.perm()
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
	frac := sp.cfg.TrainFrac
	if frac == 0 {
		frac = DefaultTrainFrac
	}
	if !(frac > 0 && frac < 1) {
		return 0, 0, fieldErrorf("Config.TrainFrac", "must be in (0, 1), got %g", frac)
	}
	n1 = int(math.Round(frac * float64(n)))
	n2 = n - n1
	if n1 < sp.minTrain || n2 < 2 {
		return 0, 0, &InputError{File: sp.d.Source, Msg: fmt.Sprintf("%d rows are too few: a %.2f train split of %d rows leaves %d for training (need at least %d) and %d for evaluation (need at least 2)",
			n, frac, n, n1, sp.minTrain, n2)}
	}
	return n1, n2, nil
}

// checkCrossFit reports k cross-fitting folds that are too many for the
// rows: each fold needs 2 evaluation rows and each train set (the other
// folds) 2 rows per tuning fold.
func (sp *setup) checkCrossFit(k int) error {
	if k < 2 {
		return fieldErrorf("Config.CrossFit", "must be at least 2, got %d", k)
	}
	n, _ := sp.d.X.Dims()
	if n/k < 2 || n-(n+k-1)/k < sp.minTrain {
		return &InputError{File: sp.d.Source, Msg: fmt.Sprintf("%d rows are too few for %d cross-fitting folds (each fold needs 2 rows, each train set %d)",
			n, k, sp.minTrain)}
	}
	return nil
}

// minSplitRows is the fewest evaluation rows that split inference with one
// train/evaluation split can use: 2 per half.
const minSplitRows = 4

// CheckRun makes, before any model is trained, every check of Run that
// needs no model: the data and its response (newSetup, CheckScale), the
// rows against the split, the tuning folds and the cross-fitting folds,
// the evaluation rows that split inference needs, the groups against the
// columns, the measure (nil: the task's default) against the task and
// against the evaluation rows it will score (checkScoredRows), the level,
// delta and perturbation, and the repetitions (none with a saved model).
// Its errors are usage errors, *InputErrors where the data
// is at fault. cfg.Backend is not used: a caller may check before it
// starts a backend. Run calls it first.
func CheckRun(d *Dataset, cfg Config, m Measure, opt EstimateOptions) error {
	if cfg.Repeats < 0 {
		return fieldErrorf("Config.Repeats", "must be at least 1 (0 means 1), got %d", cfg.Repeats)
	}
	if cfg.Repeats > 1 && cfg.Saved != nil {
		return fieldErrorf("Config.Repeats", "must be 1 with a saved model (Config.Saved): the other repetitions train with other seeds and cannot reuse it, got %d", cfg.Repeats)
	}
	if opt.Ensemble && (cfg.CrossFit < 2 || cfg.Repeats < 2) {
		return fieldErrorf("EstimateOptions.Ensemble", "needs cross-fitting (at least 2 folds) repeated at least twice, got %d folds and %d repetitions", cfg.CrossFit, max(cfg.Repeats, 1))
	}
	if (opt.Debias || opt.BiasAware) && !opt.Ensemble {
		return fieldErrorf("EstimateOptions.Debias", "and BiasAware need the ensemble of repeated cross-fits (Ensemble)")
	}
	sp, err := newSetup(d, cfg)
	if err != nil {
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
		if opt.Inference == Split && n2 < minSplitRows {
			n, _ := d.X.Dims()
			return &InputError{File: d.Source, Msg: fmt.Sprintf("%d rows are too few: split inference needs at least %d evaluation rows (2 per half), the train split leaves %d (give more rows, a smaller --train-frac, or --inference plain)",
				n, minSplitRows, n2)}
		}
	}
	if _, err := ResolveFeatures(sp.names, d.Names[sp.target], cfg.Groups, cfg.OneHot); err != nil {
		return err
	}
	if m == nil {
		var err error
		if m, err = LookupMeasure(DefaultMeasure(sp.task)); err != nil {
			return opt.infer(cfg.Seed).check() // no measures registered: nothing to check them with
		}
	}
	if !m.Supports(sp.task) {
		return &InputError{File: d.Source, Column: d.Names[sp.target], Msg: fmt.Sprintf("measure %s does not fit a %s response", m.Name(), sp.task)}
	}
	if err := sp.checkScoredRows(m, opt.Inference); err != nil {
		return err
	}
	return opt.infer(cfg.Seed).check()
}

// checkScoredRows reports a set of evaluation rows on which the measure
// cannot score any model (auc on rows of one class, r2 on a constant
// response): the rows Infer scores the full and the reduced models on, for
// the seeded split or cross-fitting folds, are known before any model is
// trained. The measure's usage errors on placeholder predictions (the
// response itself for regression, equal class probabilities otherwise)
// tell.
func (sp *setup) checkScoredRows(m Measure, inf Inference) error {
	n, _ := sp.d.X.Dims()
	perm := sp.perm()
	var sets [][]int
	where := "the evaluation split"
	if k := sp.cfg.CrossFit; k >= 2 {
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
		sets = [][]int{eval}
		if inf == Split {
			half := (len(eval) + 1) / 2
			sets = [][]int{eval[:half], eval[half:]}
			where = "a half of the evaluation split (split inference)"
		}
	}
	outs := 1
	if sp.task == Multiclass {
		outs = sp.classes
	}
	for _, rows := range sets {
		y := make([]float64, len(rows))
		pred := mat.NewDense(len(rows), outs, nil)
		for i, r := range rows {
			y[i] = sp.d.X.At(r, sp.target)
			for c := 0; c < outs; c++ {
				switch sp.task {
				case Regression:
					pred.Set(i, c, y[i])
				default:
					pred.Set(i, c, 1/float64(max(outs, 2)))
				}
			}
		}
		if _, err := m.Evaluate(y, pred); errors.Is(err, ErrUsage) {
			return &InputError{File: sp.d.Source, Column: sp.d.Names[sp.target],
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
func PrepareFolds(ctx context.Context, d *Dataset, cfg Config, k, workers int) ([]*Problem, error) {
	sp, err := newSetup(d, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Backend == nil {
		return nil, fieldErrorf("Config.Backend", "is nil: no backend to build the models")
	}
	if err := sp.checkCrossFit(k); err != nil {
		return nil, err
	}
	n, _ := d.X.Dims()
	perm, bounds := sp.perm(), foldBounds(n, k)
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	probs := make([]*Problem, k)
	errs := make([]error, k)
	fold := func(i int) {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			return
		}
		eval := perm[bounds[i]:bounds[i+1]]
		train := make([]int, 0, n-len(eval))
		train = append(append(train, perm[:bounds[i]]...), perm[bounds[i+1]:]...)
		probs[i], errs[i] = sp.problem(ctx, train, eval, i)
		if errs[i] != nil {
			errs[i] = fmt.Errorf("fold %d: %w", i+1, errs[i])
		}
	}
	first := 0
	if len(sp.cfg.Candidates) > 0 {
		// The first fold chooses among the candidates (its own fits run in
		// parallel); the other folds train its choice.
		if fold(0); errs[0] != nil {
			return nil, errs[0]
		}
		sp.cfg.Options, sp.cfg.Candidates = probs[0].Spec.Options, nil
		first = 1
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i := first; i < k; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			fold(i)
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
	d        *Dataset
	cfg      Config
	task     Task
	classes  int // K for Multiclass, else 0
	target   int
	names    []string
	featCols []int
	minTrain int
}

func newSetup(d *Dataset, cfg Config) (*setup, error) {
	if d == nil || d.X == nil {
		return nil, Usagef("no data")
	}
	_, cols := d.X.Dims()
	if cols < 2 {
		return nil, &InputError{File: d.Source, Msg: fmt.Sprintf("need a response and at least one feature, found %d column(s)", cols)}
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
		return nil, &InputError{File: d.Source, Column: d.Names[target], Msg: fmt.Sprintf("the response is constant (%g in every row)", y[0])}
	}
	task := InferTask(y)
	if cfg.Task != nil {
		task = *cfg.Task
		if task == Binary && InferTask(y) != Binary {
			return nil, &InputError{File: d.Source, Column: d.Names[target], Msg: "task binary needs a 0/1 response"}
		}
	}
	classes := 0
	if task == Multiclass {
		k, err := NumClasses(y)
		if err != nil {
			return nil, &InputError{File: d.Source, Column: d.Names[target], Msg: "task multiclass: " + err.Error()}
		}
		classes = k
	}
	sp := &setup{d: d, cfg: cfg, task: task, classes: classes, target: target, minTrain: max(cfg.MinTrain, MinTrainRows)}
	for j := 0; j < cols; j++ {
		if j != target {
			sp.names = append(sp.names, d.Names[j])
			sp.featCols = append(sp.featCols, j)
		}
	}
	if cfg.Saved != nil {
		// Before any model is made: a backend that cannot load saved
		// models is given none of the file's.
		if cfg.Backend != nil && !cfg.Backend.Capabilities().Persist {
			return nil, Usagef("backend %s cannot load saved models", cfg.Saved.Backend)
		}
		if err := cfg.Saved.Check(d, cfg); err != nil {
			return nil, err
		}
		if err := cfg.Saved.checkSetup(sp); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// problem standardises the rows and trains the full model on train.
// With Config.Saved, it loads the fold's saved model instead of training.
func (sp *setup) problem(ctx context.Context, train, eval []int, fold int) (*Problem, error) {
	cfg := sp.cfg
	xtr, ytr := rowsOf(sp.d.X, train, sp.featCols, sp.target)
	xev, yev := rowsOf(sp.d.X, eval, sp.featCols, sp.target)
	means, sds := standardise(xtr, xev)

	spec := ModelSpec{Task: sp.task, Inputs: len(sp.featCols), Seed: cfg.Seed, Options: cfg.Options, Classes: sp.classes}
	var sel *selection
	var err error
	if cfg.Saved != nil {
		sel, err = cfg.Saved.load(ctx, cfg.Backend, spec, cfg.Candidates, fold, means, sds)
	} else {
		sel, err = selectFull(ctx, cfg.Backend, spec, cfg.Candidates, xtr, ytr)
	}
	if err != nil {
		return nil, fmt.Errorf("full model: %w", err)
	}
	full := sel.model
	p := &Problem{
		Task: sp.task, BackendName: cfg.BackendName, Backend: cfg.Backend, Spec: sel.spec,
		FeatureNames: sp.names, XTrain: xtr, XEval: xev, YTrain: ytr, YEval: yev, EvalRows: append([]int(nil), eval...),
		Full: full, Seed: cfg.Seed, Classes: sp.classes, Means: means, SDs: sds,
		Chosen: sel.chosen, Candidates: sel.scores, Selection: sel.note, FitReport: FitReportOf(full),
	}
	if p.FullEval, err = full.Predict(ctx, xev); err != nil {
		Release(full)
		return nil, fmt.Errorf("full model, predict evaluation split: %w", err)
	}
	if r, c := p.FullEval.Dims(); r != len(eval) || c != p.Outputs() {
		Release(full)
		return nil, fmt.Errorf("full model, predict evaluation split: backend returned %d x %d predictions for %d rows, want %d x %d", r, c, len(eval), len(eval), p.Outputs())
	}
	return p, nil
}

// Close releases the full model.
func (p *Problem) Close() error { return Release(p.Full) }

// Features returns one Feature per column of the design matrix.
func (p *Problem) Features() []Feature {
	fs := make([]Feature, len(p.FeatureNames))
	for j, name := range p.FeatureNames {
		fs[j] = Feature{Name: name, Columns: []int{j}}
	}
	return fs
}

// Result is the importance of one feature by one estimator.
type Result struct {
	Feature   string  `json:"feature"`
	Estimator string  `json:"estimator"`
	VI        float64 `json:"vi"`
	SE        float64 `json:"se"`
	CILow     float64 `json:"ci_low"`
	CIHigh    float64 `json:"ci_high"`
	// PValue is the one-sided p-value of H0: VI <= delta (the run's
	// delta, default 0) against VI > delta.
	PValue float64 `json:"p_value"`
	// PAdjusted is PValue adjusted for the estimator's features as one
	// family (holm or bh); nil without an adjustment.
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// BiasBound, with a bias-aware interval (InferOptions.BiasAware), is
	// the bound on the estimate's bias that the interval's half-width and
	// the p-value allow for.
	BiasBound float64 `json:"bias_bound,omitempty"`
	Seconds   float64 `json:"seconds"`
	// Extra are the estimator's own fields (its Summarize), written after
	// the common ones: lazy's "lambda", the ridge penalty it used (null
	// with "no_update": true when it kept the full model, i.e. fell back
	// to dropout).
	Extra []Field `json:"-"`
}

// Get returns the value of the estimator-specific field key.
func (r Result) Get(key string) (any, bool) {
	for _, f := range r.Extra {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the common fields, then Extra in its order.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.Extra) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, f := range r.Extra {
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("result field %s: %w", f.Key, err)
		}
		b = append(append(append(append(b, ','), k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes: the keys that are not
// common fields go to Extra, in their order (numbers as float64).
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Result(v)
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var val any
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if !resultKeys[key] {
			r.Extra = append(r.Extra, Field{Key: key, Value: val})
		}
	}
	return nil
}

// resultKeys are the JSON keys of Result's common fields.
var resultKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(Result{})
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// EstimateOptions tune Estimate and Run. The zero value is what vi estimate
// does without flags: split inference at level DefaultLevel, p-values of
// H0: VI <= 0 without adjustment, all CPUs.
type EstimateOptions struct {
	Workers int     // concurrent (estimator, feature) jobs; 0 means runtime.NumCPU()
	Level   float64 // confidence level of the intervals; 0 means DefaultLevel
	// Progress, when set, is called with (0, total) as the estimation
	// starts and (done, total) after each job, from the workers.
	Progress func(done, total int)

	Inference Inference // Split (the zero value), Plain or Perturbed
	Perturb   float64   // Perturbed's rho; 0 means DefaultPerturb
	// Ensemble, with Config.CrossFit >= 2 and Config.Repeats >= 2,
	// averages each row's out-of-fold predictions over the repetitions
	// and infers once from the averages (see InferOptions.Ensemble).
	Ensemble bool
	// Debias, with Ensemble and Plain or Perturbed inference, extrapolates
	// the ensembled estimate to infinitely many repetitions; BiasAware
	// widens the interval by a bound on the remaining bias and takes the
	// p-value that agrees with it (see InferOptions).
	Debias     bool
	BiasAware  bool
	Delta      float64 // p_value tests H0: VI <= Delta
	Adjust     Adjust  // multiplicity adjustment into Result.PAdjusted
	CITruncate bool    // floor the intervals at 0

	// Checkpoint, when set, lets an interrupted run resume (see
	// ReduceOptions.Checkpoint).
	Checkpoint Checkpoint

	// Shard, when not whole, makes Run estimate one slice of the features
	// and say so in Report.Shard, for MergeReports; RunID is the run's
	// fingerprint that the shards of one run share (see ShardInfo.Run).
	Shard Shard
	RunID string
}

// infer is the InferOptions of these options; seed seeds Perturbed's noise.
func (o EstimateOptions) infer(seed int64) InferOptions {
	return InferOptions{Inference: o.Inference, Level: o.Level, Delta: o.Delta, Adjust: o.Adjust, CITruncate: o.CITruncate,
		Perturb: o.Perturb, Seed: seed, Ensemble: o.Ensemble, Debias: o.Debias, BiasAware: o.BiasAware}
}

// Estimate runs every estimator on every feature, Workers at a time, and
// turns each reduced model into VI, standard error, interval and p-value
// with the measure m (see Reductions.Infer): with the zero options, VI =
// V(full) - V(reduced) on the evaluation split and se the standard
// deviation of the per-sample influence differences over sqrt(n2).
// Results are ordered by estimator, then feature, whatever the scheduling.
func Estimate(ctx context.Context, p *Problem, m Measure, ests []Estimator, feats []Feature, opt EstimateOptions) ([]Result, error) {
	return EstimateFolds(ctx, []*Problem{p}, m, ests, feats, opt)
}

// EstimateFolds is Estimate over the folds of a cross-fitted run
// (PrepareFolds); with one Problem it is Estimate. Perturbed inference
// seeds its noise with the first fold's Seed.
func EstimateFolds(ctx context.Context, folds []*Problem, m Measure, ests []Estimator, feats []Feature, opt EstimateOptions) ([]Result, error) {
	red, err := reduceFolds(ctx, folds, m, ests, feats, opt, "", opt.Progress)
	if err != nil {
		return nil, err
	}
	return red.Infer(m, opt.infer(folds[0].Seed))
}

// reduceFolds checks that the measure scores the folds' full models and
// reduces every feature with every estimator on every fold.
func reduceFolds(ctx context.Context, folds []*Problem, m Measure, ests []Estimator, feats []Feature, opt EstimateOptions, label string, progress func(done, total int)) (*Reductions, error) {
	if len(folds) == 0 {
		return nil, fmt.Errorf("estimate: no problem")
	}
	if !m.Supports(folds[0].Task) {
		return nil, Usagef("measure %q does not fit a %s response", m.Name(), folds[0].Task)
	}
	if lv := opt.Level; lv != 0 && !(lv > 0 && lv < 1) {
		return nil, fieldErrorf("EstimateOptions.Level", "must be in (0, 1), got %g", lv)
	}
	for k, p := range folds {
		s, err := m.Evaluate(p.YEval, p.FullEval)
		if err == nil {
			err = s.checkFinite()
		}
		if err != nil {
			if len(folds) > 1 {
				return nil, fmt.Errorf("measure %s of the full model, fold %d: %w", m.Name(), k+1, err)
			}
			return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
		}
	}
	return Reduce(ctx, folds, ests, feats, ReduceOptions{Workers: opt.Workers, Progress: progress, SplitOnly: opt.Inference == Split && !opt.Ensemble,
		Checkpoint: opt.Checkpoint, Label: label, EstimatorBaselines: true})
}

// FullResult is the full model's score on the evaluation split, with how
// its training went and what it is measured against.
type FullResult struct {
	// Score is larger-is-better (a loss's is the negated loss); Loss, for
	// a loss measure (mse, logloss), is the loss itself, -Score.
	Score   float64  `json:"score"`
	Loss    *float64 `json:"loss,omitempty"`
	Seconds float64  `json:"seconds"`

	// R2 is the full model's R² on the evaluation rows (regression only).
	R2 *float64 `json:"r2,omitempty"`
	// Epochs and StoppedBy ("patience" or "cap") say how training ended,
	// for backends that report it (FitReporter; the first fold's when
	// cross-fitting).
	Epochs    int    `json:"epochs,omitempty"`
	StoppedBy string `json:"stopped_by,omitempty"`
	// Hidden names the full model's architecture: the chosen Candidate
	// (vi: the hidden layer widths), or what the caller sets.
	Hidden     string           `json:"hidden,omitempty"`
	Candidates []CandidateScore `json:"candidates,omitempty"`
	// Selection says why the choice among the candidates was not made by
	// the validation loss, when it was not.
	Selection string `json:"selection,omitempty"`
	// Baselines are the intercept-only model and Config.Baselines on the
	// same evaluation rows.
	Baselines []BaselineScore `json:"baselines,omitempty"`
}

// RunInfo describes a run: what the reports of vi estimate and vi shapley
// open with (in JSON, its fields come first, at the top level).
type RunInfo struct {
	Measure string  `json:"measure"`
	Backend string  `json:"backend"`
	Task    string  `json:"task"`
	N       int     `json:"n"`
	NTrain  int     `json:"n_train"`
	NEval   int     `json:"n_eval"`
	Seed    int64   `json:"seed"`
	Level   float64 `json:"level"`
}

// Info returns the RunInfo of this problem scored by m at the interval
// level (0 means DefaultLevel).
func (p *Problem) Info(m Measure, level float64) RunInfo {
	if level == 0 {
		level = DefaultLevel
	}
	n1, _ := p.XTrain.Dims()
	n2, _ := p.XEval.Dims()
	return RunInfo{Measure: m.Name(), Backend: p.BackendName, Task: p.Task.String(),
		N: n1 + n2, NTrain: n1, NEval: n2, Seed: p.Seed, Level: level}
}

// Report is the outcome of Run; its JSON form is the CLI's --format json
// contract.
type Report struct {
	RunInfo
	// Inference is "perturbed", "split" or "plain" (Perturb its rho);
	// CrossFit the number of cross-fitting folds (absent for one
	// train/evaluation split, where n_train and n_eval are the split's
	// sizes; with cross-fitting every row is evaluated once, n_eval is n
	// and n_train the first fold's train size); Repeats the number of
	// repetitions combined (absent for one).
	Inference string  `json:"inference"`
	Perturb   float64 `json:"perturb,omitempty"`
	CrossFit  int     `json:"crossfit,omitempty"`
	Repeats   int     `json:"repeats,omitempty"`
	Ensemble  bool    `json:"ensemble,omitempty"`
	// Debias says that the ensembled estimate was extrapolated to
	// infinitely many repetitions, BiasAware that the intervals and
	// p-values allow for each result's bias_bound (EstimateOptions).
	Debias     bool       `json:"debias,omitempty"`
	BiasAware  bool       `json:"bias_aware,omitempty"`
	Delta      float64    `json:"delta"`
	Adjust     string     `json:"adjust"`
	CITruncate bool       `json:"ci_truncate,omitempty"`
	Full       FullResult `json:"full"`
	Results    []Result   `json:"results"`
	// Warnings say when the full model is poor (see fullWarnings) and
	// which comparison baselines were left out and why; vi prints them on
	// stderr.
	Warnings []string `json:"warnings,omitempty"`
	// Shard is set when the report holds one shard of a run (--shard);
	// MergeReports combines the shards into the whole run's report.
	Shard *ShardInfo `json:"shard,omitempty"`
}

// Run prepares the problem, trains the full model (once per fold with
// Config.CrossFit) and estimates the importance of every feature (or group,
// Config.Groups) with every estimator; with Config.Repeats it does so once
// per repetition, each seeded with RepeatSeed, and combines them
// (InferRepeated). A nil measure means the task's default (DefaultMeasure:
// mse for regression, accuracy for binary and multiclass), looked up by
// name in the registry: package lazyvi's Run, or a blank import of
// lazyvi/measures, registers them.
func Run(ctx context.Context, d *Dataset, cfg Config, m Measure, ests []Estimator, opt EstimateOptions) (*Report, error) {
	M := max(cfg.Repeats, 1)
	cfg.MinTrain = max(cfg.MinTrain, MinTrainFor(ests))
	if err := CheckRun(d, cfg, m, opt); err != nil {
		return nil, err
	}
	var (
		reds      []*Reductions
		feats     []Feature
		first     *Problem
		fullSecs  float64
		score     float64
		scores    int
		baselines []BaselineScore
		notes     []string // why a baseline was left out
		r2        *float64
		shard     *ShardInfo
	)
	for rep := range M {
		c := cfg
		c.Seed = RepeatSeed(cfg.Seed, rep)
		label := ""
		if M > 1 {
			label = fmt.Sprintf("repetition %d/%d", rep+1, M)
		}
		start := time.Now()
		folds, err := prepareRun(ctx, d, c, opt.Workers)
		if err != nil {
			if label != "" {
				err = fmt.Errorf("%s: %w", label, err)
			}
			return nil, err
		}
		fullSecs += time.Since(start).Seconds()
		red, err := func() (*Reductions, error) {
			defer func() {
				for _, p := range folds {
					p.Close()
				}
			}()
			if rep == 0 {
				first = folds[0]
				if m == nil {
					if m, err = LookupMeasure(DefaultMeasure(first.Task)); err != nil {
						return nil, fmt.Errorf("no measure given, and the default: %w (pass one, or import package lazyvi or lazyvi/measures, which register them)", err)
					}
				}
				target := cfg.Target
				if target == "" && len(d.Names) > 0 {
					target = d.Names[len(d.Names)-1]
				}
				if feats, err = ResolveFeatures(first.FeatureNames, target, cfg.Groups, cfg.OneHot); err != nil {
					return nil, err
				}
				if opt.Shard.Count > len(feats) {
					return nil, Usagef("--shard %s: the run has %d features; use at most %d shards", opt.Shard, len(feats), len(feats))
				}
				feats, shard = opt.Shard.Slice(feats, opt.RunID)
			}
			progress := opt.Progress
			if progress != nil && M > 1 {
				progress = func(done, total int) { opt.Progress(rep*total+done, M*total) }
			}
			red, err := reduceFolds(ctx, folds, m, ests, feats, opt, label, progress)
			if err != nil {
				return nil, err
			}
			if rep == 0 {
				// The diagnostics of the full model: the first repetition's.
				if baselines, r2, notes, err = diagnose(ctx, folds, m, cfg.Baselines); err != nil {
					return nil, err
				}
			}
			for _, q := range folds {
				fs, err := m.Evaluate(q.YEval, q.FullEval)
				if err != nil {
					return nil, err
				}
				score += fs.Value
				scores++
			}
			return red, nil
		}()
		if err != nil {
			return nil, err
		}
		reds = append(reds, red)
	}
	res, err := InferRepeated(reds, m, opt.infer(cfg.Seed))
	if err != nil {
		return nil, err
	}
	score /= float64(scores)
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), nonFinite("the score", score))
	}
	rep := &Report{
		RunInfo:   first.Info(m, opt.Level),
		Inference: opt.Inference.String(), Delta: opt.Delta, Adjust: opt.Adjust.String(), CITruncate: opt.CITruncate,
		Full:    FullResult{Score: score, Loss: LossOf(m, score), Seconds: fullSecs, Baselines: baselines, R2: r2},
		Results: res,
		Shard:   shard,
	}
	rep.Full.Epochs, rep.Full.StoppedBy = first.FitReport.Epochs, first.FitReport.StoppedBy
	rep.Full.Hidden, rep.Full.Candidates, rep.Full.Selection = first.Chosen, first.Candidates, first.Selection
	if opt.Inference == Perturbed {
		rep.Perturb = opt.Perturb
		if rep.Perturb == 0 {
			rep.Perturb = DefaultPerturb
		}
	}
	if len(reds[0].Folds) > 1 {
		rep.CrossFit = len(reds[0].Folds)
		rep.NEval = rep.N
	}
	if M > 1 {
		rep.Repeats, rep.Ensemble = M, opt.Ensemble
	}
	rep.Debias, rep.BiasAware = opt.Debias, opt.BiasAware
	rep.Warnings = append(notes, fullWarnings(m, rep.Full)...)
	return rep, nil
}

// prepareRun is PrepareFolds with Config.CrossFit >= 2 folds, else
// Prepare's one split.
func prepareRun(ctx context.Context, d *Dataset, cfg Config, workers int) ([]*Problem, error) {
	if cfg.CrossFit >= 2 {
		return PrepareFolds(ctx, d, cfg, cfg.CrossFit, workers)
	}
	p, err := Prepare(ctx, d, cfg)
	if err != nil {
		return nil, err
	}
	return []*Problem{p}, nil
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
