package pipeline_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	_ "github.com/lazyvi/lazyvi/estimators" // registers dropout, retrain, lazy-es
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// A run with every choice made by hand, where lazyvi.Run would take vi's
// defaults: the linear backend, dropout and retrain by name, mse, one
// train/evaluation split (two thirds to train) and plain inference. The
// paper's linear setting has y = 1.5 x1 + 1.2 x2 + x3 + noise, Corr(x1,
// x2) 0.5, and x4 to x6 pure noise.
func ExampleRun() {
	sim, err := simulate.Generate("linear", 300, 0.5, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	var ests []framework.Estimator
	for _, name := range []string{"dropout", "retrain"} {
		e, err := framework.LookupEstimator(name)
		if err != nil {
			fmt.Println(err)
			return
		}
		ests = append(ests, e)
	}
	m, err := framework.LookupMeasure("mse")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Target: "y", Seed: 1}
	opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 2}
	rep, err := pipeline.Run(context.Background(), d, cfg, m, ests, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s, %d train rows, %d evaluation rows\n", rep.Measure, rep.NTrain, rep.NEval)
	for _, e := range ests {
		var important []string
		for _, r := range rep.Results {
			if r.Estimator == e.Name() && r.CILow > 0 {
				important = append(important, r.Feature)
			}
		}
		fmt.Printf("%-8s interval above 0: %s\n", e.Name(), strings.Join(important, " "))
	}
	// Output:
	// mse, 200 train rows, 100 evaluation rows
	// dropout  interval above 0: x1 x2 x3
	// retrain  interval above 0: x1 x2 x3
}
