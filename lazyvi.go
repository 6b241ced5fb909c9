// Package lazyvi is the front door of the lazyvi library: Run estimates the
// variable importance of every feature of a data set as "vi estimate" does,
// with the same defaults, and Diabetes is vi's built-in data set.
//
//	d, err := framework.LoadCSV("data.csv")
//	...
//	rep, err := lazyvi.Run(ctx, d, framework.Config{Target: "y"}, nil, nil, framework.EstimateOptions{})
//	...
//	for _, r := range rep.Results {
//		fmt.Println(r.Feature, r.Estimator, r.VI, r.SE)
//	}
//
// Importing this package registers the built-in estimators (lazy, dropout,
// retrain, lazy-es), measures (mse, r2, accuracy, logloss, auc) and the mlp
// backend, so that the framework finds them by name: no blank imports are
// needed. The parts themselves live in framework (the interfaces, Prepare,
// Estimate, Run), estimators, measures, backends/... and backendplugin.
package lazyvi

import (
	"context"

	"github.com/lazyvi/lazyvi/backends/mlp"
	_ "github.com/lazyvi/lazyvi/estimators" // registers lazy, dropout, retrain, lazy-es
	"github.com/lazyvi/lazyvi/framework"
	_ "github.com/lazyvi/lazyvi/measures" // registers mse, r2, accuracy, logloss, auc
)

// DefaultBackend is the backend Run uses when Config.Backend is nil, and
// vi's --backend default.
const DefaultBackend = "mlp"

// DefaultEstimators returns the names of the estimators Run uses when given
// none, in report order: vi estimate's --estimators default.
func DefaultEstimators() []string { return []string{"lazy", "dropout", "retrain"} }

// Run trains the full model and estimates the importance of every feature
// (or group, Config.Groups) of d with every estimator: framework.Run with
// vi estimate's defaults for what it is not given. A nil Config.Backend is
// the mlp backend, in this process; nil ests are DefaultEstimators; a nil
// measure is the task's default (framework.DefaultMeasure: mse for
// regression, accuracy for classification). Zero fields of cfg and opt take
// the framework's defaults (framework.DefaultTrainFrac, DefaultLevel, split
// inference), and the estimators' zero settings theirs (estimators.Lazy's
// Folds: estimators.DefaultFolds), which are vi's; Config.Seed is used as
// given (vi's --seed is 1 by default).
func Run(ctx context.Context, d *framework.Dataset, cfg framework.Config, m framework.Measure, ests []framework.Estimator, opt framework.EstimateOptions) (*framework.Report, error) {
	if cfg.Backend == nil {
		cfg.Backend = mlp.Backend{}
		if cfg.BackendName == "" {
			cfg.BackendName = DefaultBackend
		}
	}
	if ests == nil {
		for _, name := range DefaultEstimators() {
			e, err := framework.LookupEstimator(name)
			if err != nil {
				return nil, err
			}
			ests = append(ests, e)
		}
	}
	return framework.Run(ctx, d, cfg, m, ests, opt)
}
