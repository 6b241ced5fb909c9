package estimators

import (
	"context"
	"fmt"
	"strconv"

	"github.com/lazyvi/lazyvi/framework"
)

func init() { framework.RegisterEstimator(LazyES{Steps: DefaultESSteps}) }

// DefaultESSteps is lazy-es's number of optimizer steps as registered (vi's
// --es-steps default): 120 minibatches of the backend's batch size, the
// learning rate rising linearly to 4 times the backend's lr over the first
// 30 steps and falling linearly to zero (the backends' warm-start schedule,
// nn.WarmRate), Adam resuming from the full model's second moments: close
// to retrain at a fraction of its time; fewer steps are faster and
// further from it, more are slower and closer.
const DefaultESSteps = 120

// maxESSteps bounds LazyES.Steps (vi's --es-steps): a million minibatch
// steps per feature is already far past early stopping.
const maxESSteps = 1_000_000

// LazyES is LazyVI with early stopping (the paper's Discussion, section
// 7.1): the reduced model starts at the full model's parameters theta_f and
// takes a few optimizer steps on the dropped train split, then is evaluated
// on the dropped evaluation split. It needs a backend whose models are
// framework.WarmStarters (Capabilities.WarmStart: mlp, cnn), and no
// gradients or Jacobian, so it suits networks whose Jacobian is too large
// for lazy (CNNs).
//
// The number of steps is Steps if positive (its setting es-steps, vi's
// --es-steps; the registered estimator has DefaultESSteps), else one epoch
// over the train split (the backend's minibatches). The warm start's
// minibatch order is seeded with the run's seed, the same for every
// feature, as retrain reuses the full model's seed.
type LazyES struct {
	Steps int
}

// Name returns "lazy-es".
func (LazyES) Name() string { return "lazy-es" }

// Describe implements framework.Describer.
func (LazyES) Describe() string {
	return "the full network trained on for --es-steps steps without the feature (needs warm starts: mlp, cnn)"
}

// Needs implements framework.Needer: warm starts.
func (LazyES) Needs() framework.Capabilities { return framework.Capabilities{WarmStart: true} }

// Settings implements framework.Configurer: es-steps.
func (e LazyES) Settings() []framework.OptionInfo {
	return []framework.OptionInfo{{Name: "es-steps", Default: strconv.Itoa(e.Steps),
		Usage: "lazy-es: optimizer `steps` from the full model's parameters (0: one epoch)"}}
}

// Configure implements framework.Configurer.
func (e LazyES) Configure(settings map[string]string) (framework.Estimator, error) {
	for k, v := range settings {
		if k != "es-steps" {
			return nil, framework.Usagef("%s is not a setting of estimator lazy-es (settings: es-steps)", k)
		}
		n, err := framework.ParseCount("es-steps", v, 0, maxESSteps, "0 is one epoch")
		if err != nil {
			return nil, err
		}
		e.Steps = n
	}
	return e, nil
}

// Baseline implements framework.Baseliner: the same optimizer steps on
// the train split with no feature removed (the full model's training
// stopped on a validation slice; more steps on the train rows change it
// too, and that change must not count as importance).
func (e LazyES) Baseline(ctx context.Context, p *framework.Problem) (framework.Reduced, error) {
	return e.Reduce(ctx, p, framework.Feature{Name: "(baseline)"})
}

// Reduce continues the full model on the dropped train split.
func (e LazyES) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	w, ok := framework.AsWarmStarter(p.Full)
	if !ok {
		return framework.Reduced{}, framework.Usagef("estimator lazy-es needs a backend with warm starts; backend %q has none (use dropout or retrain)", p.BackendName)
	}
	m, err := w.WarmStart(ctx, p.Drop(p.XTrain, f), p.YTrain, max(e.Steps, 0), p.Seed)
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
