package framework

import (
	"bytes"
	"context"
	"encoding/json"
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
	TrainFrac   float64 // share of rows in the train split; 0 means 2/3
	Seed        int64
	// MinTrain is the fewest rows the train split (with CrossFit, each
	// train set) must leave; below MinTrainRows means MinTrainRows. Run
	// raises it to what its estimators need (MinTrainFor), so that a split
	// too small for them fails before any model is trained, naming the data.
	MinTrain int

	// CrossFit >= 2 makes Run cross-fit: CrossFit folds, each in turn the
	// evaluation set of models trained on the others (PrepareFolds);
	// TrainFrac is then unused. 0 or 1: one train/evaluation split.
	CrossFit int
	// Groups and OneHot choose the features Run estimates (see
	// ResolveFeatures); none means one feature per column.
	Groups []Group
	OneHot bool

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

// DefaultTrainFrac is the train share used when Config.TrainFrac is 0.
const DefaultTrainFrac = 2.0 / 3.0

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
	n, _ := d.X.Dims()
	frac := cfg.TrainFrac
	if frac == 0 {
		frac = DefaultTrainFrac
	}
	if !(frac > 0 && frac < 1) {
		return nil, Usagef("--train-frac must be in (0, 1), got %g", frac)
	}
	n1 := int(math.Round(frac * float64(n)))
	n2 := n - n1
	if n1 < sp.minTrain || n2 < 2 {
		return nil, &InputError{File: d.Source, Msg: fmt.Sprintf("%d rows are too few: a %.2f train split of %d rows leaves %d for training (need at least %d) and %d for evaluation (need at least 2)",
			n, frac, n, n1, sp.minTrain, n2)}
	}
	perm := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed5b11)).Perm(n)
	return sp.problem(ctx, perm[:n1], perm[n1:])
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
	if k < 2 {
		return nil, Usagef("--crossfit must be at least 2, got %d", k)
	}
	n, _ := d.X.Dims()
	if n/k < 2 || n-(n+k-1)/k < sp.minTrain {
		return nil, &InputError{File: d.Source, Msg: fmt.Sprintf("%d rows are too few for %d cross-fitting folds (each fold needs 2 rows, each train set %d)",
			n, k, sp.minTrain)}
	}
	perm := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed5b11)).Perm(n)
	bounds := make([]int, k+1)
	for i := range bounds {
		bounds[i] = i * n / k
	}
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
		probs[i], errs[i] = sp.problem(ctx, train, eval)
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
	if cfg.Backend == nil {
		return nil, Usagef("no backend")
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
	return sp, nil
}

// problem standardises the rows and trains the full model on train.
func (sp *setup) problem(ctx context.Context, train, eval []int) (*Problem, error) {
	cfg := sp.cfg
	xtr, ytr := rowsOf(sp.d.X, train, sp.featCols, sp.target)
	xev, yev := rowsOf(sp.d.X, eval, sp.featCols, sp.target)
	standardise(xtr, xev)

	spec := ModelSpec{Task: sp.task, Inputs: len(sp.featCols), Seed: cfg.Seed, Options: cfg.Options, Classes: sp.classes}
	sel, err := selectFull(ctx, cfg.Backend, spec, cfg.Candidates, xtr, ytr)
	if err != nil {
		return nil, fmt.Errorf("full model: %w", err)
	}
	full := sel.model
	p := &Problem{
		Task: sp.task, BackendName: cfg.BackendName, Backend: cfg.Backend, Spec: sel.spec,
		FeatureNames: sp.names, XTrain: xtr, XEval: xev, YTrain: ytr, YEval: yev,
		Full: full, Seed: cfg.Seed, Classes: sp.classes,
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
	Seconds   float64  `json:"seconds"`
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

// EstimateOptions tune Estimate and Run. The zero value is the paper's
// plain inference at level 0.95, all CPUs.
type EstimateOptions struct {
	Workers int     // concurrent (estimator, feature) jobs; 0 means runtime.NumCPU()
	Level   float64 // confidence level of the intervals; 0 means 0.95
	// Progress, when set, is called with (0, total) as the estimation
	// starts and (done, total) after each job, from the workers.
	Progress func(done, total int)

	Inference  Inference // Plain (the zero value) or Split
	Delta      float64   // p_value tests H0: VI <= Delta
	Adjust     Adjust    // multiplicity adjustment into Result.PAdjusted
	CITruncate bool      // floor the intervals at 0

	// Checkpoint, when set, lets an interrupted run resume (see
	// ReduceOptions.Checkpoint).
	Checkpoint Checkpoint
}

func (o EstimateOptions) infer() InferOptions {
	return InferOptions{Inference: o.Inference, Level: o.Level, Delta: o.Delta, Adjust: o.Adjust, CITruncate: o.CITruncate}
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
// (PrepareFolds); with one Problem it is Estimate.
func EstimateFolds(ctx context.Context, folds []*Problem, m Measure, ests []Estimator, feats []Feature, opt EstimateOptions) ([]Result, error) {
	if len(folds) == 0 {
		return nil, fmt.Errorf("estimate: no problem")
	}
	if !m.Supports(folds[0].Task) {
		return nil, Usagef("measure %q does not fit a %s response", m.Name(), folds[0].Task)
	}
	if lv := opt.Level; lv != 0 && !(lv > 0 && lv < 1) {
		return nil, Usagef("--level must be in (0, 1), got %g", lv)
	}
	for k, p := range folds {
		if _, err := m.Evaluate(p.YEval, p.FullEval); err != nil {
			if len(folds) > 1 {
				return nil, fmt.Errorf("measure %s of the full model, fold %d: %w", m.Name(), k+1, err)
			}
			return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
		}
	}
	red, err := Reduce(ctx, folds, ests, feats, ReduceOptions{Workers: opt.Workers, Progress: opt.Progress, SplitOnly: opt.Inference == Split, Checkpoint: opt.Checkpoint})
	if err != nil {
		return nil, err
	}
	return red.Infer(m, opt.infer())
}

// FullResult is the full model's score on the evaluation split, with how
// its training went and what it is measured against.
type FullResult struct {
	Score   float64 `json:"score"`
	Seconds float64 `json:"seconds"`

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
// level (0 means 0.95).
func (p *Problem) Info(m Measure, level float64) RunInfo {
	if level == 0 {
		level = 0.95
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
	// Inference is "plain" or "split"; CrossFit the number of
	// cross-fitting folds (absent for one train/evaluation split, where
	// n_train and n_eval are the split's sizes; with cross-fitting every
	// row is evaluated once, n_eval is n and n_train the first fold's
	// train size).
	Inference  string     `json:"inference"`
	CrossFit   int        `json:"crossfit,omitempty"`
	Delta      float64    `json:"delta"`
	Adjust     string     `json:"adjust"`
	CITruncate bool       `json:"ci_truncate,omitempty"`
	Full       FullResult `json:"full"`
	Results    []Result   `json:"results"`
	// Warnings say when the full model is poor (see fullWarnings); vi
	// prints them on stderr.
	Warnings []string `json:"warnings,omitempty"`
}

// Run prepares the problem, trains the full model (once per fold with
// Config.CrossFit) and estimates the importance of every feature (or group,
// Config.Groups) with every estimator. A nil measure means the task's
// default (mse for regression, accuracy for binary and multiclass), looked
// up by name.
func Run(ctx context.Context, d *Dataset, cfg Config, m Measure, ests []Estimator, opt EstimateOptions) (*Report, error) {
	start := time.Now()
	cfg.MinTrain = max(cfg.MinTrain, MinTrainFor(ests))
	var folds []*Problem
	if cfg.CrossFit >= 2 {
		fs, err := PrepareFolds(ctx, d, cfg, cfg.CrossFit, opt.Workers)
		if err != nil {
			return nil, err
		}
		folds = fs
	} else {
		p, err := Prepare(ctx, d, cfg)
		if err != nil {
			return nil, err
		}
		folds = []*Problem{p}
	}
	defer func() {
		for _, p := range folds {
			p.Close()
		}
	}()
	fullSecs := time.Since(start).Seconds()
	p := folds[0]
	var err error
	if m == nil {
		if m, err = LookupMeasure(DefaultMeasure(p.Task)); err != nil {
			return nil, err
		}
	}
	target := ""
	if cfg.Target != "" {
		target = cfg.Target
	} else if len(d.Names) > 0 {
		target = d.Names[len(d.Names)-1]
	}
	feats, err := ResolveFeatures(p.FeatureNames, target, cfg.Groups, cfg.OneHot)
	if err != nil {
		return nil, err
	}
	res, err := EstimateFolds(ctx, folds, m, ests, feats, opt)
	if err != nil {
		return nil, err
	}
	var score float64
	for _, q := range folds {
		fs, err := m.Evaluate(q.YEval, q.FullEval)
		if err != nil {
			return nil, err
		}
		score += fs.Value
	}
	score /= float64(len(folds))
	rep := &Report{
		RunInfo:   p.Info(m, opt.Level),
		Inference: opt.Inference.String(), Delta: opt.Delta, Adjust: opt.Adjust.String(), CITruncate: opt.CITruncate,
		Full:    FullResult{Score: score, Seconds: fullSecs},
		Results: res,
	}
	if len(folds) > 1 {
		rep.CrossFit = len(folds)
		rep.NEval = rep.N
	}
	rep.Full.Epochs, rep.Full.StoppedBy = p.FitReport.Epochs, p.FitReport.StoppedBy
	rep.Full.Hidden, rep.Full.Candidates, rep.Full.Selection = p.Chosen, p.Candidates, p.Selection
	if rep.Full.Baselines, rep.Full.R2, err = diagnose(ctx, folds, m, cfg.Baselines); err != nil {
		return nil, err
	}
	rep.Warnings = fullWarnings(m, rep.Full)
	return rep, nil
}

// DefaultMeasure names the default measure of a task.
func DefaultMeasure(t Task) string {
	if t == Binary || t == Multiclass {
		return "accuracy"
	}
	return "mse"
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
func standardise(train, eval *mat.Dense) {
	_, p := train.Dims()
	r, _ := train.Dims()
	col := make([]float64, r)
	for j := 0; j < p; j++ {
		mat.Col(col, j, train)
		mean, sd := stat.MeanStdDev(col, nil)
		if !(sd > 0) {
			sd = 1
		}
		for _, x := range []*mat.Dense{train, eval} {
			r, _ := x.Dims()
			for i := 0; i < r; i++ {
				x.Set(i, j, (x.At(i, j)-mean)/sd)
			}
		}
	}
}
