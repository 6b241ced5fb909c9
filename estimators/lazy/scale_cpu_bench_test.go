//go:build unix

package lazy

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// scaleTrained is vi bench highdim --n 10000 --width 200:100: the MLP's
// default training (validation stopping), as retrain uses it.
var scaleTrained = scaleProblem{setting: "highdim", n: 10000, rho: 0.5, trained: true}

// BenchmarkScaleVsRetrain is vi bench highdim --n 10000 --width 200:100
// --features 4 in CPU seconds (user + system of this process, every
// thread), which a loaded machine disturbs far less than wall time: lazy
// and retrain per feature, one feature at a time.
func BenchmarkScaleVsRetrain(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	cpu := func() float64 {
		s, _ := processCPU(b)
		return s
	}
	for b.Loop() {
		var sumL, sumR float64
		for _, f := range c.p.Features()[:4] {
			var secs [2]float64
			var wall [2]float64
			for i, est := range []framework.Estimator{Estimator{}, estimators.Retrain{}} {
				c0, w0 := cpu(), time.Now()
				if _, err := est.Reduce(ctx, c.p, f); err != nil {
					b.Fatal(err)
				}
				secs[i], wall[i] = cpu()-c0, time.Since(w0).Seconds()
			}
			sumL, sumR = sumL+secs[0], sumR+secs[1]
			fmt.Printf("%s: lazy %.2f CPU s (%.2f wall), retrain %.2f CPU s (%.2f wall)\n", f.Name, secs[0], wall[0], secs[1], wall[1])
		}
		fmt.Printf("x1..x4: lazy %.2f CPU s, retrain %.2f CPU s: retrain / lazy %.2f\n", sumL, sumR, sumR/sumL)
	}
}

// lazyNoBaseline is lazy without framework.BaselineReducer: every feature
// searches its penalty from scratch (the behaviour before).
type lazyNoBaseline struct{ lz Estimator }

func (l lazyNoBaseline) Name() string { return "lazy" }
func (l lazyNoBaseline) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	return l.lz.Reduce(ctx, p, f)
}
func (l lazyNoBaseline) Summarize(stats []map[string]float64) []framework.Field {
	return l.lz.Summarize(stats)
}
func (l lazyNoBaseline) Baseline(ctx context.Context, p *framework.Problem) (framework.Reduced, error) {
	return l.lz.Baseline(ctx, p)
}

// BenchmarkScaleRunVsRetrain is vi bench highdim --n 10000 --width 200:100
// --features 4 as the framework schedules it (pipeline.Reduce, x1..x4,
// each estimator's baseline with them): wall and CPU seconds of lazy
// (with the baseline's penalty handed to the features, and without, each
// first in every other round), and of retrain, at 2 and 1 workers, in one
// process on one full model (a fresh copy for each, so that no estimator
// finds signals memoised by another).
func BenchmarkScaleRunVsRetrain(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	fresh := c.freshCopies(ctx, b)
	cpu := func() float64 {
		s, _ := processCPU(b)
		return s
	}
	feats := c.p.Features()[:4]
	ests := []framework.Estimator{Estimator{}, lazyNoBaseline{}, estimators.Retrain{}}
	for round := 0; b.Loop(); round++ {
		for _, workers := range []int{2, 1} {
			var wall, secs [3]float64
			// The two lazies in turn first, so that neither always pays
			// for the heap's growth.
			order := []int{round % 2, 1 - round%2, 2}
			for _, i := range order {
				est := ests[i]
				p := fresh()
				c0, w0 := cpu(), time.Now()
				if _, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: workers, EstimatorBaselines: true}); err != nil {
					b.Fatal(err)
				}
				secs[i], wall[i] = cpu()-c0, time.Since(w0).Seconds()
			}
			fmt.Printf("workers %d: lazy %.2f s (%.2f CPU s), lazy without the baseline's penalty %.2f s (%.2f CPU s), retrain %.2f s (%.2f CPU s): retrain / lazy %.2f wall, %.2f CPU (without: %.2f, %.2f)\n",
				workers, wall[0], secs[0], wall[1], secs[1], wall[2], secs[2], wall[2]/wall[0], secs[2]/secs[0], wall[2]/wall[1], secs[2]/secs[1])
		}
	}
}

// processCPU is this process's user and system seconds, every thread, and
// its minor page faults so far.
func processCPU(b *testing.B) (seconds float64, minorFaults int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds(), ru.Minflt
}

// freshCopies returns a function giving c's problem with a fresh copy of
// its full model each call (the same parameters), so that no run finds
// signals another one memoised.
func (c *scaleProblem) freshCopies(ctx context.Context, b *testing.B) func() *framework.Problem {
	state, err := c.p.Full.(framework.Persister).SaveState(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return func() *framework.Problem {
		m, err := c.p.Backend.New(ctx, c.p.Spec)
		if err == nil {
			err = m.(framework.Persister).LoadState(ctx, state)
		}
		if err != nil {
			b.Fatal(err)
		}
		q := *c.p
		q.Full = m
		return &q
	}
}

// BenchmarkScaleSketchVsRetrain is BenchmarkScaleRunVsRetrain for lazy's
// final solves preconditioned by the subsample's sketch (lazy's own) and
// without it (config.noSketch: plain CG, the baseline's Ritz pairs where
// they serve), at 2 workers as vi bench runs them: wall and CPU seconds of
// each, and retrain's, in one process (the two lazies in turn first).
//
//	go test -run X -bench ScaleSketchVsRetrain -benchtime 2x ./estimators/lazy
func BenchmarkScaleSketchVsRetrain(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	fresh := c.freshCopies(ctx, b)
	feats := c.p.Features()[:4]
	ests := []framework.Estimator{Estimator{}, Estimator{cfg: config{noSketch: true}}, estimators.Retrain{}}
	for round := 0; b.Loop(); round++ {
		var wall, secs [3]float64
		for _, i := range []int{round % 2, 1 - round%2, 2} {
			p := fresh()
			c0, _ := processCPU(b)
			w0 := time.Now()
			if _, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{ests[i]}, feats, pipeline.ReduceOptions{Workers: 2, EstimatorBaselines: true}); err != nil {
				b.Fatal(err)
			}
			c1, _ := processCPU(b)
			secs[i], wall[i] = c1-c0, time.Since(w0).Seconds()
		}
		fmt.Printf("round %d: sketch %.2f s (%.2f CPU s), without %.2f s (%.2f CPU s), retrain %.2f s (%.2f CPU s): retrain / lazy %.2f wall, %.2f CPU (without the sketch: %.2f, %.2f)\n",
			round, wall[0], secs[0], wall[1], secs[1], wall[2], secs[2], wall[2]/wall[0], secs[2]/secs[0], wall[2]/wall[1], secs[2]/secs[1])
	}
}
