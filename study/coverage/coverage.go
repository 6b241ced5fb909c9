// Package coverage is the study of the inference options: it repeats a
// setting with a known truth (simulated, or real data with planted
// columns) and reports, per inference candidate, estimator and feature,
// how often the intervals cover the truth, how far the estimates sit from
// it, and how often p < 0.05. Every candidate is computed from the same
// fitted models of a repetition. The vi command runs it as
// "vi bench coverage".
package coverage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// Config is what the study repeats and how.
type Config struct {
	// Setting is linear or binary (simulated data sets of N rows, Corr(x1,
	// x2) = Rho) or semi (Data with a planted null and signal).
	Setting string
	N       int     // rows of a simulated data set (0: 2000 for linear, 1000 for binary)
	Rho     float64 // Corr(x1, x2) of a simulated setting (NaN: the setting's default)
	Data    *dataio.Dataset
	Target  string  // semi: the response column ("": the last)
	Signal  float64 // semi: the planted signal's VI as a share of Var(y)
	Copy    float64 // semi: also plant a noisy copy of the feature most correlated with the response, of this correlation to it (0: none)

	Reps       int // repetitions (data sets)
	Estimators []framework.Estimator
	// The cross-fitted candidates' folds (at least 2) and the repeated
	// ones' repetitions (1: no repeated candidates); Perturb the rhos of
	// the perturbed candidates (at least one).
	CrossFit, Repeats int
	Perturb           []float64
	Backend           framework.Backend
	Options           map[string]string // the backend's options
	// Candidates are the backend's architectures to choose among, Rivals
	// the models of other kinds its full model is chosen against, as vi
	// estimate chooses (pipeline.Config); none: always the backend's.
	Candidates []pipeline.Candidate
	Rivals     []pipeline.Baseline
	Level      float64 // of the intervals
	Workers    int     // repetitions run concurrently
	Seed       int64   // of the first repetition; repetition r uses Seed + r
	// Progress, when set, is told the repetitions done out of Reps (from
	// several goroutines, one call at a time).
	Progress func(done, total int)
}

// MaxReps bounds Config.Reps: each repetition's results are kept until
// the study summarises them.
const MaxReps = 100_000

// Run runs the study.
func Run(ctx context.Context, c Config) (*Report, error) {
	if c.Reps < 1 || c.Workers < 1 || c.CrossFit < 2 || c.Repeats < 1 || len(c.Perturb) == 0 || len(c.Estimators) == 0 {
		return nil, framework.Usagef("coverage: want at least one repetition, worker, estimator and perturbation, at least 2 cross-fitting folds and 1 repeat")
	}
	if !(c.Level > 0 && c.Level < 1) {
		return nil, framework.Usagef("coverage: the level must be in (0, 1), got %g", c.Level)
	}
	if c.Reps > MaxReps {
		return nil, framework.Usagef("coverage: %d repetitions: at most %d (a coverage's standard error is then below 0.1%%)", c.Reps, MaxReps)
	}
	if c.Repeats > pipeline.MaxRepeats {
		return nil, framework.Usagef("coverage: %d repeats of the cross-fit: at most %d", c.Repeats, pipeline.MaxRepeats)
	}
	draw, rep, err := newDraw(c)
	if err != nil {
		return nil, err
	}
	cands := candidates(c.Perturb, c.Repeats)
	for i := range cands {
		cands[i].Opt.Level = c.Level
	}
	start := time.Now()
	fit := fitter{be: c.Backend, opts: c.Options, crossfit: c.CrossFit, repeats: c.Repeats, ests: c.Estimators, cands: cands,
		candidates: c.Candidates, rivals: c.Rivals}
	results, truths, measure, kinds, err := runReps(ctx, c, fit, draw)
	if err != nil {
		return nil, err
	}
	rep.Reps, rep.CrossFit, rep.Repeats, rep.Level = c.Reps, c.CrossFit, c.Repeats, c.Level
	rep.Measure, rep.Hidden, rep.Seconds = measure, c.Options["hidden"], time.Since(start).Seconds()
	if len(c.Rivals) > 0 {
		rep.Kinds = kinds
	}
	for _, c := range cands {
		rep.Candidates = append(rep.Candidates, c.Name)
	}
	nf := len(truths[0])
	for k, cand := range cands {
		for e := range c.Estimators {
			for f := 0; f < nf; f++ {
				rep.Rows = append(rep.Rows, summarise(results, truths, e*nf+f, k, f, cand.Name, c.Level))
			}
		}
	}
	return &rep, nil
}

// runReps runs the repetitions, Workers at a time, and returns each one's
// results per candidate, truths, the measure and how many repetitions'
// full models were of each kind; the first error cancels the rest.
func runReps(ctx context.Context, c Config, fit fitter, draw drawFunc) ([][][]inference.Result, [][]float64, string, map[string]int, error) {
	// results[r][k] are repetition r's results under candidate k.
	results := make([][][]inference.Result, c.Reps)
	truths := make([][]float64, c.Reps)
	var measure string
	kinds := map[string]int{}
	var mu sync.Mutex
	var firstErr error
	done := 0
	jobs := make(chan int)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A goroutine per repetition at most, and no more than the
	// reductions may run at once (pipeline.MaxWorkers): more would hold
	// their models in memory and finish no sooner.
	for w := 0; w < min(c.Workers, c.Reps, pipeline.MaxWorkers()); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				out, err := fit.rep(ctx, draw, c.Seed+int64(r))
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("repetition %d: %w", r+1, err)
						cancel()
					}
				} else {
					results[r], truths[r], measure = out.res, out.truth, out.measure
					kinds[out.kind]++
					done++
					if c.Progress != nil {
						c.Progress(done, c.Reps)
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for r := 0; r < c.Reps; r++ {
		select {
		case jobs <- r:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, nil, "", nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, "", nil, err
	}
	return results, truths, measure, kinds, nil
}
