// Package permute holds the marginal permutation importance (Breiman's
// for random forests, scikit-learn's permutation_importance): the full
// model evaluated on the evaluation rows with the feature's column shuffled
// among them. Importing the package registers it as "permute".
//
// It needs no refit and runs on every backend, but it does not estimate
// the conditional importance that retrain and lazy estimate: shuffling
// x_j breaks its link with the other features as well as with y, and the
// model is evaluated where the data never were. For a model equal to a
// linear truth y = x'beta + noise, the reduced loss exceeds the full one by
// E[(f(x') - f(x))^2] = beta_j^2 E[(x_j' - x_j)^2] = 2 beta_j^2 Var(x_j),
// twice dropout's beta_j^2 Var(x_j), whatever the correlation (conditional
// importance: beta_j^2 Var(x_j | x_-j)).
package permute

import (
	"context"
	"fmt"

	"github.com/lazyvi/lazyvi/estimators/internal/resample"
	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

func init() { framework.RegisterEstimator(Permute{}) }

// Permute is marginal permutation importance. Each reduction draws one
// permutation of the evaluation rows from a stream keyed by the run's seed
// and the feature's name; a group's columns are permuted jointly (the same
// rows for all of them). scikit-learn averages the loss over n_repeats
// permutations; here each repetition of the run (vi's --repeats, which
// reseeds) draws its own, and the framework averages the importances, so
// that the standard error counts the permutations' spread too.
type Permute struct{}

// Name returns "permute".
func (Permute) Name() string { return "permute" }

// Describe implements framework.Describer.
func (Permute) Describe() string {
	return "the full model with the feature's column shuffled among the evaluation rows (marginal permutation importance; biased up for correlated features)"
}

// Reduce predicts the full model on the evaluation rows with the feature's
// columns permuted.
func (Permute) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	n, _ := p.XEval.Dims()
	perm := resample.Stream(p.Seed, f.Name, "permute").Perm(n)
	x := mat.DenseCopyOf(p.XEval)
	resample.PermuteInto(x, f.Columns, resample.Columns(p.XEval, f.Columns), perm)
	pred, err := p.Full.Predict(ctx, x)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("permute: predict: %w", err)
	}
	return framework.Reduced{Pred: pred}, nil
}
