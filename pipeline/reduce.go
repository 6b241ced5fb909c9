package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// ReduceOptions tune Reduce.
type ReduceOptions struct {
	Workers int // concurrent reductions; 0 means runtime.NumCPU()
	// Progress, when set, is called with (0, total) as the estimation
	// starts and (done, total) after each job, from the workers.
	Progress func(done, total int)
	// SplitOnly, for cross-fitting (two folds or more), skips the
	// reductions that split inference does not use: those of the folds
	// that score the full model (see Infer). Plain inference on the result
	// is then an error.
	SplitOnly bool
	// Checkpoint, when set, supplies the reductions an earlier run
	// finished and keeps each new one, so that an interrupted run resumes.
	Checkpoint Checkpoint
	// Label, when set, names this set of folds (e.g. "repetition 2/3") in
	// the checkpoint's keys and in errors.
	Label string
	// EstimatorBaselines computes, for every estimator that is a
	// Baseliner, its baseline on every fold whose full model is scored,
	// and Infer scores its reduced models against it. Without it (vi roar,
	// which scores the reduced models themselves) there are none. (Not to
	// be confused with Config.Baselines, the comparison models beside the
	// full model.)
	EstimatorBaselines bool

	// slots, when set, is what each job takes its turn from, shared with
	// the training that overlaps the reductions (Run); nil: Workers jobs
	// at a time.
	slots *slots
}

// MaxWorkers bounds ReduceOptions.Workers (and EstimateOptions.Workers):
// 8 per CPU, at least 64. Reductions beyond it do not finish sooner, even
// with a backend in another process or machine that waits on its answers,
// but each holds its kernel and signals in memory, and thousands of
// runnable goroutines delay everything else, a signal's handling included
// (each waits its turn for a CPU).
func MaxWorkers() int { return max(64, 8*runtime.NumCPU()) }

// workersOf is n workers, or one per CPU where n is 0 or less (the
// options' zero value).
func workersOf(n int) int {
	if n <= 0 {
		return runtime.NumCPU()
	}
	return n
}

// Reduce runs every estimator on every feature of every fold, Workers at a
// time (at most one per job, and MaxWorkers).
func Reduce(ctx context.Context, folds []*framework.Problem, ests []framework.Estimator, feats []framework.Feature, opt ReduceOptions) (*inference.Reductions, error) {
	if len(folds) == 0 {
		return nil, fmt.Errorf("reduce: no problem")
	}
	rd := newReducer(folds, ests, feats, opt)
	jobs := rd.plan()
	// One goroutine per job at most (more would only wait on the
	// channel, each with its stack), and MaxWorkers.
	workers := min(workersOf(opt.Workers), len(jobs), MaxWorkers())
	if opt.Progress != nil {
		opt.Progress(0, len(jobs)) // estimation starts: the clock for an ETA
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan reduceJob)
	var (
		mu       sync.Mutex
		firstErr error
		done     int
		wg       sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if err := opt.slots.do(ctx, func() error { return rd.do(ctx, j) }); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
					continue
				}
				mu.Lock()
				done++
				d := done
				mu.Unlock()
				if opt.Progress != nil {
					opt.Progress(d, len(jobs))
				}
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rd.r, nil
}

// baselineJob, as a reduceJob's f, makes it estimator e's baseline on fold
// k.
const baselineJob = -1

// reduceJob is one reduction of Reduce: fold k, estimator e, feature f (or
// baselineJob).
type reduceJob struct{ k, e, f int }

// reducer is Reduce's state: the reductions it fills, and a channel per
// fold and estimator closed when that baseline is done.
type reducer struct {
	folds    []*framework.Problem
	ests     []framework.Estimator
	feats    []framework.Feature
	opt      ReduceOptions
	r        *inference.Reductions
	baseDone [][]chan struct{}
}

func newReducer(folds []*framework.Problem, ests []framework.Estimator, feats []framework.Feature, opt ReduceOptions) *reducer {
	r := &inference.Reductions{Folds: folds, Estimators: ests, Features: feats,
		Reduced: make([][][]framework.Reduced, len(folds)), Seconds: make([][][]float64, len(folds)),
		Base: make([][]framework.Reduced, len(folds)), BaseSeconds: make([][]float64, len(folds))}
	baseDone := make([][]chan struct{}, len(folds))
	for k := range folds {
		r.Reduced[k] = make([][]framework.Reduced, len(ests))
		r.Seconds[k] = make([][]float64, len(ests))
		r.Base[k] = make([]framework.Reduced, len(ests))
		r.BaseSeconds[k] = make([]float64, len(ests))
		for e := range ests {
			r.Reduced[k][e] = make([]framework.Reduced, len(feats))
			r.Seconds[k][e] = make([]float64, len(feats))
		}
		baseDone[k] = make([]chan struct{}, len(ests))
	}
	return &reducer{folds: folds, ests: ests, feats: feats, opt: opt, r: r, baseDone: baseDone}
}

// plan lists the jobs: every estimator's baselines first, each fold's
// before any of the features that start from it (BaselineReducer), which
// wait for it where they need it; then feature by feature, fold by fold,
// every estimator's reduction in turn. The estimators' reductions differ
// in cost by a hundredfold (dropout's take milliseconds, retrain's
// seconds): taken in turn, the run's first reductions sample every
// estimator's cost, so that the rate they go at (a progress's ETA, a
// forecast of the run time) holds for the rest, where estimator by
// estimator the cheap ones first would promise an early end.
func (rd *reducer) plan() []reduceJob {
	var jobs []reduceJob
	opt, nk := rd.opt, len(rd.folds)
	for e, est := range rd.ests {
		if _, ok := est.(framework.Baseliner); ok && opt.EstimatorBaselines {
			for k := range nk {
				if !opt.SplitOnly || nk == 1 || inference.FoldScoresFull(k) {
					jobs = append(jobs, reduceJob{k, e, baselineJob})
					rd.baseDone[k][e] = make(chan struct{})
				}
			}
		}
	}
	for f := range rd.feats {
		for k := range nk {
			if opt.SplitOnly && nk > 1 && inference.FoldScoresFull(k) {
				continue
			}
			for e := range rd.ests {
				jobs = append(jobs, reduceJob{k, e, f})
			}
		}
	}
	return jobs
}

// do runs job j and keeps its reduction; its error names the job.
func (rd *reducer) do(ctx context.Context, j reduceJob) error {
	e, opt := rd.ests[j.e], rd.opt
	var f framework.Feature
	what := "the baseline"
	if j.f != baselineJob {
		f = rd.feats[j.f]
		what = "feature " + f.Name
	}
	key := fmt.Sprintf("fold %d/%d, estimator %s, %s", j.k+1, len(rd.folds), e.Name(), what)
	if opt.Label != "" {
		key = opt.Label + ", " + key
	}
	var from func() (framework.Reduced, error)
	if _, ok := e.(framework.BaselineReducer); ok && j.f != baselineJob && rd.baseDone[j.k][j.e] != nil {
		from = func() (framework.Reduced, error) {
			select {
			case <-rd.baseDone[j.k][j.e]:
				return rd.r.Base[j.k][j.e], nil
			case <-ctx.Done():
				return framework.Reduced{}, fmt.Errorf("waiting for the baseline: %w", ctx.Err())
			}
		}
	}
	red, secs, err := reduction{p: rd.folds[j.k], e: e, f: f, baseline: j.f == baselineJob, from: from}.checkpointed(ctx, opt.Checkpoint, key)
	collectIfGrown()
	if err != nil {
		if len(rd.folds) > 1 {
			err = fmt.Errorf("fold %d: %w", j.k+1, err)
		}
		if opt.Label != "" {
			err = fmt.Errorf("%s: %w", opt.Label, err)
		}
		return fmt.Errorf("estimator %s, %s: %w", e.Name(), what, err)
	}
	if j.f == baselineJob {
		rd.r.Base[j.k][j.e], rd.r.BaseSeconds[j.k][j.e] = red, secs
		close(rd.baseDone[j.k][j.e])
	} else {
		rd.r.Reduced[j.k][j.e][j.f], rd.r.Seconds[j.k][j.e][j.f] = red, secs
	}
	return nil
}

// reduction is one job of Reduce: estimator e's reduction of feature f on
// fold p, or with baseline its baseline; from, when set, waits for the
// baseline that a BaselineReducer's reduction starts from.
type reduction struct {
	p        *framework.Problem
	e        framework.Estimator
	f        framework.Feature
	baseline bool
	from     func() (framework.Reduced, error)
}

// run is the reduction: with baseline the estimator's Baseline (e is then
// a Baseliner), else with from set its ReduceFrom with the baseline from
// waits for (e is then a BaselineReducer), else its Reduce. The seconds do
// not count the wait.
func (j reduction) run(ctx context.Context) (red framework.Reduced, secs float64, err error) {
	p, e, f, baseline, from := j.p, j.e, j.f, j.baseline, j.from
	// An estimator (or the numerics under it) that panics on a malformed
	// backend answer must not take the process down with its plugin
	// still running: turn the panic into this feature's error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (panic): %v", r)
		}
	}()
	var waited atomic.Int64 // nanoseconds
	start := time.Now()
	switch {
	case baseline:
		red, err = e.(framework.Baseliner).Baseline(ctx, p)
	case from != nil:
		red, err = e.(framework.BaselineReducer).ReduceFrom(ctx, p, f, func() (framework.Reduced, error) {
			t := time.Now()
			defer func() { waited.Add(int64(time.Since(t))) }()
			return from()
		})
	default:
		red, err = e.Reduce(ctx, p, f)
	}
	secs = (time.Since(start) - time.Duration(waited.Load())).Seconds()
	if err != nil {
		return framework.Reduced{}, secs, err
	}
	if red.Pred == nil {
		return framework.Reduced{}, secs, fmt.Errorf("no reduced predictions")
	}
	n2, _ := p.XEval.Dims()
	for _, pred := range red.Predictions() {
		if pred == nil {
			return framework.Reduced{}, secs, fmt.Errorf("a draw of the reduced predictions is missing")
		}
		if r, c := pred.Dims(); r != n2 || c != p.Outputs() {
			return framework.Reduced{}, secs, fmt.Errorf("reduced predictions are %d x %d, want %d x %d", r, c, n2, p.Outputs())
		}
	}
	return red, secs, nil
}

// shaped reports whether every prediction of red is rows x cols.
func shaped(red framework.Reduced, rows, cols int) bool {
	for _, pred := range red.Predictions() {
		if r, c := pred.Dims(); r != rows || c != cols {
			return false
		}
	}
	return red.Pred != nil
}

// checkpointed is run through the checkpoint c: a reduction saved by an
// earlier run (of the right shape) is reused, a new one is saved.
func (j reduction) checkpointed(ctx context.Context, c Checkpoint, key string) (framework.Reduced, float64, error) {
	if c == nil {
		return j.run(ctx)
	}
	p := j.p
	n2, _ := p.XEval.Dims()
	if red, secs, ok := c.Load(key); ok && shaped(red, n2, p.Outputs()) {
		return red, secs, nil
	}
	red, secs, err := j.run(ctx)
	if err != nil {
		return red, secs, err
	}
	return red, secs, c.Save(key, red, secs)
}

// Checkpoint keeps finished reductions so that an interrupted run resumes
// where it stopped: Reduce asks it before fitting a reduced model and tells
// it each one it finishes. Keys name the fold, estimator and feature.
// Implementations must be safe for concurrent use.
type Checkpoint interface {
	Load(key string) (r framework.Reduced, seconds float64, ok bool)
	Save(key string, r framework.Reduced, seconds float64) error
}
