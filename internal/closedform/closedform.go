// Package closedform is a test fixture: it runs an estimator on the
// paper's linear setting with a least-squares full model, whose
// importances the permutation estimators' tests know in closed form. Only
// tests import it.
package closedform

import (
	"context"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// Beta is the linear setting's coefficients; Rho the correlation of x1 and
// x2 the tests use.
var Beta = []float64{1.5, 1.2, 1, 0, 0, 0}

const Rho = 0.9

// Linear estimates every feature of the linear setting (n rows, Rho, seed)
// with e, its full model least squares (the truth's form, so that the
// estimators' closed forms for a correct model apply), plain Wald
// inference and mse; groups, when given, are the features instead
// (dataio.ParseGroups' form). It returns the results by feature.
func Linear(ctx context.Context, e framework.Estimator, n int, seed int64, groups string) (map[string]inference.Result, error) {
	sim, err := simulate.Generate("linear", n, Rho, seed)
	if err != nil {
		return nil, err
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	cfg := pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: seed}
	if groups != "" {
		if cfg.Groups, err = dataio.ParseGroups(groups); err != nil {
			return nil, err
		}
	}
	rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), []framework.Estimator{e}, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}})
	if err != nil {
		return nil, err
	}
	out := map[string]inference.Result{}
	for _, r := range rep.Results {
		out[r.Feature] = r
	}
	return out, nil
}
