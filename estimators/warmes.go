package estimators

import (
	"context"
	"fmt"
	"strconv"

	"github.com/lazyvi/lazyvi/framework"
)

func init() { framework.RegisterEstimator(WarmES{MaxEpochs: DefaultWarmESEpochs}) }

// DefaultWarmESEpochs is warm-es's cap on epochs as registered (vi's
// --es-epochs default), the cap of Sun and Raskutti's code.
const DefaultWarmESEpochs = 100

// maxWarmESEpochs bounds WarmES.MaxEpochs (vi's --es-epochs).
const maxWarmESEpochs = 100_000

// WarmES is the warm-start early-stopping variable importance of Sun and
// Raskutti (AISTATS 2025, arXiv 2412.01120): the reduced model starts at
// the dropout solution (the full network's parameters, evaluated on the
// dropped inputs) and trains on the dropped train split epoch by epoch
// until the loss on a held-out slice of it stops improving; the reduced
// model is evaluated on the dropped evaluation split, and the interval is
// the run's (a Wald interval on the evaluation rows, as theirs).
//
// It differs from lazy-es in when it stops: lazy-es takes a fixed number of
// minibatch steps for every feature, warm-es as many epochs as the held-out
// slice rewards, up to MaxEpochs, keeping the best epoch's parameters (the
// starting ones, dropout's answer, when no epoch improves on them). The
// slice is the one the backend's Fit held out of the train split, so the
// full model and its continuations never train on it. It needs a backend
// whose models are framework.WarmStoppers (mlp, cnn).
type WarmES struct {
	MaxEpochs int
}

// Name returns "warm-es".
func (WarmES) Name() string { return "warm-es" }

// Describe implements framework.Describer.
func (WarmES) Describe() string {
	return "the full network trained on without the feature until held-out train rows stop improving, at most --es-epochs epochs (Sun and Raskutti; mlp, cnn)"
}

// Needs implements framework.Needer: warm starts that stop early (WarmStop,
// which implies WarmStart).
func (WarmES) Needs() framework.Capabilities { return framework.Capabilities{WarmStop: true} }

// Settings implements framework.Configurer: es-epochs.
func (e WarmES) Settings() []framework.OptionInfo {
	return []framework.OptionInfo{{Name: "es-epochs", Default: strconv.Itoa(e.MaxEpochs),
		Usage: "warm-es: at most `epochs` from the full model's parameters, stopped by the held-out train rows"}}
}

// Configure implements framework.Configurer.
func (e WarmES) Configure(settings map[string]string) (framework.Estimator, error) {
	for k, v := range settings {
		if k != "es-epochs" {
			return nil, framework.Usagef("%s is not a setting of estimator warm-es (settings: es-epochs)", k)
		}
		n, err := framework.ParseCount("es-epochs", v, 1, maxWarmESEpochs, "the held-out rows stop it long before")
		if err != nil {
			return nil, err
		}
		e.MaxEpochs = n
	}
	return e, nil
}

// Baseline implements framework.Baseliner: the same procedure with no
// feature removed (where the full model's own early stopping left room on
// the held-out rows, the continuation takes it, and that must not count as
// importance).
func (e WarmES) Baseline(ctx context.Context, p *framework.Problem) (framework.Reduced, error) {
	return e.Reduce(ctx, p, framework.Feature{Name: "(baseline)"})
}

// statEpochs is the Reduced.Stats key of the epochs a reduction ran.
const statEpochs = "epochs"

// Reduce continues the full model on the dropped train split until the
// held-out rows stop improving.
func (e WarmES) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	w, ok := framework.AsWarmStopper(p.Full)
	if !ok {
		return framework.Reduced{}, framework.Usagef("estimator warm-es needs a backend whose warm starts stop early; backend %q has none (use lazy-es, dropout or retrain)", p.BackendName)
	}
	stages := framework.StagesFrom(ctx)
	stop := stages.Start("train")
	xtr := p.Drop(p.XTrain, f)
	m, err := w.WarmStartStopped(ctx, xtr, p.YTrain, max(e.MaxEpochs, 1), p.Seed)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("warm start: %w", err)
	}
	defer framework.Release(m)
	epochs := framework.FitReportOf(m).Epochs
	// An epoch: a forward and a backward pass on every train row, and the
	// held-out rows' forward pass, counted as three passes over the rows.
	stop(3 * float64(epochs) * passFlops(m, xtr))
	stop = stages.Start("predict")
	xev := p.Drop(p.XEval, f)
	pred, err := m.Predict(ctx, xev)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict: %w", err)
	}
	stop(passFlops(m, xev))
	return framework.Reduced{Pred: pred, Stats: map[string]float64{statEpochs: float64(epochs)}}, nil
}

// Summarize implements framework.Summarizer: "es_epochs", the mean number
// of epochs the feature's reductions ran.
func (WarmES) Summarize(stats []map[string]float64) []framework.Field {
	var sum float64
	var n int
	for _, s := range stats {
		if v, ok := s[statEpochs]; ok {
			sum += v
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return []framework.Field{{Key: "es_epochs", Value: sum / float64(n)}}
}
