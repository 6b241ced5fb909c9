package estimators_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/simulate"
)

var (
	highDimOnce sync.Once
	highDim     *framework.Problem
	highDimErr  error
)

// highDimProblem is the paper's high-dimensional setting (5.3: n = 1000,
// p = 100, Corr(x1, x2) = 0.5) with the default MLP (one hidden layer of 50,
// M = 5101 parameters), split 667/333 and its full model trained once.
func highDimProblem(b *testing.B) *framework.Problem {
	highDimOnce.Do(func() {
		sim, err := simulate.Generate("highdim", 1000, 0.5, 1)
		if err != nil {
			highDimErr = err
			return
		}
		d := &framework.Dataset{Source: "highdim", Names: sim.Names, X: sim.X}
		highDim, highDimErr = framework.Prepare(context.Background(), d, framework.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 1})
	})
	if highDimErr != nil {
		b.Fatal(highDimErr)
	}
	return highDim
}

// BenchmarkHighDimPerFeature times one reduced model (one feature, one
// goroutine) of lazy and of retrain on the high-dimensional setting; the
// ratio of the two ns/op is retrain/lazy per feature. Features cycle through
// x1..x100 so that both the important and the null ones are timed.
//
// Work of lazy per feature (n1 = 667 < M = 5101, so the dual): the
// structured kernel K (n1^2 (p + 2m) ~ 0.07 GFLOP), five fold
// eigendecompositions of ~534 x 534 (~9 n^3 ~ 1.4 GFLOP in all), and for each
// of ~27 penalties and 5 folds a Phi^T a and a forward pass (small).
func BenchmarkHighDimPerFeature(b *testing.B) {
	p := highDimProblem(b)
	feats := p.Features()
	for _, e := range []framework.Estimator{estimators.Lazy{}, estimators.Retrain{}, estimators.Dropout{}} {
		b.Run(e.Name(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := e.Reduce(context.Background(), p, feats[i%len(feats)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
