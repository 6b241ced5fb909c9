package estimators_test

import (
	"context"
	"fmt"
	"math"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// An estimator used by hand on a prepared problem (the split and the full
// model, here least squares on the paper's linear setting, Corr(x1, x2)
// 0.9): each feature's reduced model's predictions, scored against the
// full model's. Dropout (the feature replaced by its mean, no retraining)
// credits x1 and x2 with what they share; retrain (a model fitted without
// the feature) does not, so its importances of the correlated pair are
// smaller.
func Example() {
	sim, err := simulate.Generate("linear", 300, 0.9, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	ctx := context.Background()
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Target: "y", Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	mse := measures.MSE()
	full, err := mse.Evaluate(p.YEval, p.FullEval)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range []framework.Estimator{estimators.Dropout{}, estimators.Retrain{}} {
		fmt.Printf("%-8s", e.Name())
		for _, f := range p.Features() {
			red, err := e.Reduce(ctx, p, f)
			if err != nil {
				fmt.Println(err)
				return
			}
			s, err := mse.Evaluate(p.YEval, red.Pred)
			if err != nil {
				fmt.Println(err)
				return
			}
			vi := full.Value - s.Value
			if math.Abs(vi) < 0.05 {
				vi = 0 // x4 to x6: no "-0.0" from a tiny negative
			}
			fmt.Printf(" %s %.1f", f.Name, vi)
		}
		fmt.Println()
	}
	// Output:
	// dropout  x1 2.0 x2 1.4 x3 0.8 x4 0.0 x5 0.0 x6 0.0
	// retrain  x1 0.4 x2 0.2 x3 0.8 x4 0.0 x5 0.0 x6 0.0
}
