package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Config describes how to set up a Problem from a Dataset.
type Config struct {
	Target      string  // response column; "" means the last column
	Task        *Task   // nil: inferred (a 0/1 response is Binary)
	BackendName string  // for messages and the report
	Backend     Backend // builds the full model and, for retrain, the reduced ones
	Options     map[string]string
	TrainFrac   float64 // share of rows in the train split; 0 means 2/3
	Seed        int64
	Folds       int     // CV folds for lazy's penalty; 0 means 5
	Lambda      float64 // > 0 fixes lazy's penalty
}

// DefaultTrainFrac is the train share used when Config.TrainFrac is 0.
const DefaultTrainFrac = 2.0 / 3.0

// InferTask returns Binary when every response is 0 or 1, else Regression.
func InferTask(y []float64) Task {
	for _, v := range y {
		if v != 0 && v != 1 {
			return Regression
		}
	}
	return Binary
}

// Prepare splits the data set (seeded), standardises the features with
// train-split statistics and trains the full model once.
func Prepare(ctx context.Context, d *Dataset, cfg Config) (*Problem, error) {
	if d == nil || d.X == nil {
		return nil, Usagef("no data")
	}
	if cfg.Backend == nil {
		return nil, Usagef("no backend")
	}
	n, cols := d.X.Dims()
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
	folds := cfg.Folds
	if folds == 0 {
		folds = 5
	}
	if folds < 2 {
		return nil, Usagef("--folds must be at least 2, got %d", folds)
	}
	frac := cfg.TrainFrac
	if frac == 0 {
		frac = DefaultTrainFrac
	}
	if !(frac > 0 && frac < 1) {
		return nil, Usagef("--train-frac must be in (0, 1), got %g", frac)
	}
	n1 := int(math.Round(frac * float64(n)))
	n2 := n - n1
	if n1 < 2*folds || n2 < 2 {
		return nil, &InputError{File: d.Source, Msg: fmt.Sprintf("%d rows are too few: a %.2f train split of %d rows leaves %d for %d folds (need at least %d) and %d for evaluation (need at least 2)",
			n, frac, n, n1, folds, 2*folds, n2)}
	}

	names := make([]string, 0, cols-1)
	featCols := make([]int, 0, cols-1)
	for j := 0; j < cols; j++ {
		if j != target {
			names = append(names, d.Names[j])
			featCols = append(featCols, j)
		}
	}
	perm := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed5b11)).Perm(n)
	xtr, ytr := rowsOf(d.X, perm[:n1], featCols, target)
	xev, yev := rowsOf(d.X, perm[n1:], featCols, target)
	standardise(xtr, xev)

	spec := ModelSpec{Task: task, Inputs: len(featCols), Seed: cfg.Seed, Options: cfg.Options}
	full, err := cfg.Backend.New(spec)
	if err != nil {
		return nil, fmt.Errorf("full model: %w", err)
	}
	p := &Problem{
		Task: task, BackendName: cfg.BackendName, Backend: cfg.Backend, Spec: spec,
		FeatureNames: names, XTrain: xtr, XEval: xev, YTrain: ytr, YEval: yev,
		Full: full, Folds: folds, Lambda: cfg.Lambda, Seed: cfg.Seed,
	}
	if err := full.Fit(ctx, xtr, ytr); err != nil {
		Release(full)
		return nil, fmt.Errorf("fit full model: %w", err)
	}
	if p.FullEval, err = full.Predict(ctx, xev); err != nil {
		Release(full)
		return nil, fmt.Errorf("full model, predict evaluation split: %w", err)
	}
	if r, c := p.FullEval.Dims(); r != n2 || c != 1 {
		Release(full)
		return nil, fmt.Errorf("full model, predict evaluation split: backend returned %d x %d predictions for %d rows, want %d x 1", r, c, n2, n2)
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
	Seconds   float64 `json:"seconds"`
	// Lambda is the ridge penalty lazy used; nil for other estimators and
	// when lazy chose not to update (NoUpdate: the reduced model is the full
	// model, i.e. lazy fell back to dropout). In JSON, an estimator that
	// tunes a penalty always has a "lambda" key: null when NoUpdate.
	Lambda   *float64 `json:"-"`
	NoUpdate bool     `json:"-"`
}

// MarshalJSON writes the result with "lambda" (a number, or null with
// "no_update": true) for estimators that tune a penalty, and without it for
// the others.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	if r.Lambda == nil && !r.NoUpdate {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		Lambda   *float64 `json:"lambda"`
		NoUpdate bool     `json:"no_update,omitempty"`
	}{plain(r), r.Lambda, r.NoUpdate})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	var v struct {
		plain
		Lambda   *float64 `json:"lambda"`
		NoUpdate bool     `json:"no_update"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Result(v.plain)
	r.Lambda, r.NoUpdate = v.Lambda, v.NoUpdate
	return nil
}

// EstimateOptions tune Estimate.
type EstimateOptions struct {
	Workers  int     // concurrent (estimator, feature) jobs; 0 means runtime.NumCPU()
	Level    float64 // confidence level of the intervals; 0 means 0.95
	Progress func(done, total int)
}

// Estimate runs every estimator on every feature, Workers at a time, and
// turns each reduced model into VI, standard error and Wald interval with the
// measure m: VI = V(full) - V(reduced) on the evaluation split, and se the
// standard deviation of the per-sample influence differences over sqrt(n2).
// Results are ordered by estimator, then feature, whatever the scheduling.
func Estimate(ctx context.Context, p *Problem, m Measure, ests []Estimator, feats []Feature, opt EstimateOptions) ([]Result, error) {
	if !m.Supports(p.Task) {
		return nil, Usagef("measure %q does not fit a %s response", m.Name(), p.Task)
	}
	level := opt.Level
	if level == 0 {
		level = 0.95
	}
	if !(level > 0 && level < 1) {
		return nil, Usagef("--level must be in (0, 1), got %g", level)
	}
	z := distuv.UnitNormal.Quantile(0.5 + level/2)
	full, err := m.Evaluate(p.YEval, p.FullEval)
	if err != nil {
		return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	total := len(ests) * len(feats)
	results := make([]Result, total)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		done     int
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
		mu.Unlock()
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range jobs {
				e, f := ests[k/len(feats)], feats[k%len(feats)]
				r, err := estimateOne(ctx, p, m, full, z, e, f)
				if err != nil {
					fail(fmt.Errorf("estimator %s, feature %s: %w", e.Name(), f.Name, err))
					continue
				}
				results[k] = r
				mu.Lock()
				done++
				d := done
				mu.Unlock()
				if opt.Progress != nil {
					opt.Progress(d, total)
				}
			}
		}()
	}
feed:
	for k := 0; k < total; k++ {
		select {
		case jobs <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, nil
}

func estimateOne(ctx context.Context, p *Problem, m Measure, full Score, z float64, e Estimator, f Feature) (res Result, err error) {
	// An estimator (or the numerics under it) that panics on a malformed
	// backend answer must not take the process down with its plugin
	// still running: turn the panic into this feature's error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (panic): %v", r)
		}
	}()
	start := time.Now()
	red, err := e.Reduce(ctx, p, f)
	secs := time.Since(start).Seconds()
	if err != nil {
		return Result{}, err
	}
	if red.Pred == nil {
		return Result{}, fmt.Errorf("no reduced predictions")
	}
	rs, err := m.Evaluate(p.YEval, red.Pred)
	if err != nil {
		return Result{}, fmt.Errorf("measure %s of the reduced model: %w", m.Name(), err)
	}
	diff := make([]float64, len(full.Influence))
	for i := range diff {
		diff[i] = full.Influence[i] - rs.Influence[i]
	}
	vi := full.Value - rs.Value
	se := stat.StdDev(diff, nil) / math.Sqrt(float64(len(diff)))
	r := Result{Feature: f.Name, Estimator: e.Name(), VI: vi, SE: se, CILow: vi - z*se, CIHigh: vi + z*se, Seconds: secs}
	switch {
	case math.IsInf(red.Lambda, 1):
		r.NoUpdate = true
	case red.Lambda > 0:
		l := red.Lambda
		r.Lambda = &l
	}
	return r, nil
}

// FullResult is the full model's score on the evaluation split.
type FullResult struct {
	Score   float64 `json:"score"`
	Seconds float64 `json:"seconds"`
}

// Report is the outcome of Run; its JSON form is the CLI's --format json
// contract.
type Report struct {
	Measure string     `json:"measure"`
	Backend string     `json:"backend"`
	Task    string     `json:"task"`
	N       int        `json:"n"`
	NTrain  int        `json:"n_train"`
	NEval   int        `json:"n_eval"`
	Seed    int64      `json:"seed"`
	Level   float64    `json:"level"`
	Full    FullResult `json:"full"`
	Results []Result   `json:"results"`
}

// Run prepares the problem, trains the full model and estimates every
// feature's importance with every estimator. A nil measure means the task's
// default (mse for regression, accuracy for binary), looked up by name.
func Run(ctx context.Context, d *Dataset, cfg Config, m Measure, ests []Estimator, opt EstimateOptions) (*Report, error) {
	start := time.Now()
	p, err := Prepare(ctx, d, cfg)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	fullSecs := time.Since(start).Seconds()
	if m == nil {
		if m, err = LookupMeasure(DefaultMeasure(p.Task)); err != nil {
			return nil, err
		}
	}
	res, err := Estimate(ctx, p, m, ests, p.Features(), opt)
	if err != nil {
		return nil, err
	}
	fs, err := m.Evaluate(p.YEval, p.FullEval)
	if err != nil {
		return nil, err
	}
	level := opt.Level
	if level == 0 {
		level = 0.95
	}
	n1, _ := p.XTrain.Dims()
	n2, _ := p.XEval.Dims()
	return &Report{
		Measure: m.Name(), Backend: p.BackendName, Task: p.Task.String(),
		N: n1 + n2, NTrain: n1, NEval: n2, Seed: p.Seed, Level: level,
		Full:    FullResult{Score: fs.Value, Seconds: fullSecs},
		Results: res,
	}, nil
}

// DefaultMeasure names the default measure of a task.
func DefaultMeasure(t Task) string {
	if t == Binary {
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
