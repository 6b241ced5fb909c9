package estimators

import (
	"context"
	"fmt"

	"github.com/lazyvi/lazyvi/framework"
)

func init() { framework.RegisterEstimator(LazyES{}) }

// LazyES is LazyVI with early stopping (the paper's Discussion, section
// 7.1): the reduced model starts at the full model's parameters theta_f and
// takes a few optimizer steps on the dropped train split, then is evaluated
// on the dropped evaluation split. It needs a backend whose models are
// framework.WarmStarters (Capabilities.WarmStart: mlp, cnn), and no
// gradients or Jacobian, so it suits networks whose Jacobian is too large
// for lazy (CNNs).
//
// The number of steps is Steps if positive, else Problem.ESSteps if
// positive (vi's --es-steps), else DefaultESSteps. The warm start's minibatch order is seeded with
// the run's seed, the same for every feature, as retrain reuses the full
// model's seed.
type LazyES struct {
	Steps int
}

// DefaultESSteps is lazy-es's number of optimizer steps when none is set.
// One epoch, the default before, is a handful of steps on a small data set
// (30 on the digits' training rows); on vi roar's digits benchmark (cnn,
// random ordering) it left lazy-es 3-11 accuracy points below retrain. 200
// steps (with the backends' Adam resuming from the full model's second
// moments) are within 3 points of retrain at fractions 0.1, 0.5 and 0.75,
// at about a quarter of retrain's time; docs/defaults.md has the
// measurements and the trade-off.
const DefaultESSteps = 200

// Name returns "lazy-es".
func (LazyES) Name() string { return "lazy-es" }

// Reduce continues the full model on the dropped train split.
func (e LazyES) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	w, ok := p.Full.(framework.WarmStarter)
	if !ok {
		return framework.Reduced{}, framework.Usagef("estimator lazy-es needs a backend with warm starts; backend %q has none (use dropout or retrain)", p.BackendName)
	}
	steps := e.Steps
	if steps <= 0 {
		steps = p.ESSteps
	}
	if steps <= 0 {
		steps = DefaultESSteps
	}
	m, err := w.WarmStart(ctx, p.Drop(p.XTrain, f), p.YTrain, steps, p.Seed)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("warm start: %w", err)
	}
	defer framework.Release(m)
	pred, err := m.Predict(ctx, p.Drop(p.XEval, f))
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict: %w", err)
	}
	return framework.Reduced{Pred: pred}, nil
}
