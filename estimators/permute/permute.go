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
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/estimators/internal/resample"
	"github.com/lazyvi/lazyvi/framework"
)

func init() { framework.RegisterEstimator(Permute{Repeats: DefaultRepeats}) }

// DefaultRepeats is the number of permutations averaged per feature as
// registered (vi's --permute-repeats default), scikit-learn's n_repeats.
const DefaultRepeats = 5

// MaxRepeats bounds Permute.Repeats: each permutation's predictions are
// kept until inference scores them.
const MaxRepeats = 1000

// maxDrawBytes bounds the predictions one reduction keeps (Repeats x the
// evaluation rows x the outputs): 256 MiB.
const maxDrawBytes = 256 << 20

// Permute is marginal permutation importance. Each reduction draws Repeats
// permutations of the evaluation rows (at least one) from a stream keyed
// by the run's seed and the feature's name, so that a feature draws the
// same whatever the workers and the other features; a group's columns are
// permuted jointly (the same rows for all of them). As scikit-learn's
// n_repeats, the reduced model's score is the mean of the measure over the
// permutations (framework.Reduced.Draws), and each row's influence the mean
// of its influences, so that the interval is that of the averaged
// importance: averaging shrinks the permutations' own spread by Repeats.
type Permute struct {
	Repeats int
}

// Name returns "permute".
func (Permute) Name() string { return "permute" }

// Describe implements framework.Describer.
func (Permute) Describe() string {
	return "the full model with the feature's column shuffled among the evaluation rows, --permute-repeats times (marginal permutation importance; biased up for correlated features)"
}

// Settings implements framework.Configurer: permute-repeats.
func (e Permute) Settings() []framework.OptionInfo {
	return []framework.OptionInfo{{Name: "permute-repeats", Default: strconv.Itoa(e.Repeats),
		Usage: "permute: `permutations` of each feature's column whose scores are averaged"}}
}

// Configure implements framework.Configurer.
func (e Permute) Configure(settings map[string]string) (framework.Estimator, error) {
	for k, v := range settings {
		if k != "permute-repeats" {
			return nil, framework.Usagef("%s is not a setting of estimator permute (settings: permute-repeats)", k)
		}
		n, err := framework.ParseCount("permute-repeats", v, 1, MaxRepeats, "the average of more permutations moves by far less than its standard error")
		if err != nil {
			return nil, err
		}
		e.Repeats = n
	}
	return e, nil
}

// Ensembles implements framework.Ensembler: false. Each repetition of a
// run permutes the column differently, and the average of the reduced
// predictions over repetitions would average the permutations away.
func (Permute) Ensembles() bool { return false }

// Reduce predicts the full model on the evaluation rows with the feature's
// columns permuted, once per repeat.
func (e Permute) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	n, _ := p.XEval.Dims()
	repeats := max(e.Repeats, 1)
	// The draws are kept for inference: refuse what cannot be kept.
	if need := float64(repeats) * float64(n) * float64(p.Outputs()) * 8; repeats > MaxRepeats || need > maxDrawBytes {
		return framework.Reduced{}, framework.Usagef("permute: %d permutations of %d evaluation rows keep %.3g MB of predictions per feature (at most %d permutations and %d MB); use fewer --permute-repeats",
			repeats, n, need/1e6, MaxRepeats, maxDrawBytes>>20)
	}
	rng := resample.Stream(p.Seed, f.Name, "permute")
	cols := resample.Columns(p.XEval, f.Columns)
	var red framework.Reduced
	for r := range repeats {
		if err := ctx.Err(); err != nil {
			return framework.Reduced{}, err
		}
		// A fresh copy each time: a model may keep what it was given.
		x := mat.DenseCopyOf(p.XEval)
		resample.PermuteInto(x, f.Columns, cols, rng.Perm(n))
		pred, err := p.Full.Predict(ctx, x)
		if err != nil {
			return framework.Reduced{}, fmt.Errorf("permute: predict: %w", err)
		}
		if r == 0 {
			red.Pred = pred
		} else {
			red.Draws = append(red.Draws, pred)
		}
	}
	return red, nil
}
