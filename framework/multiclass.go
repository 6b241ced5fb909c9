package framework

import (
	"context"

	"gonum.org/v1/gonum/mat"
)

// Multiclass problems and warm starts: the task, its inference rule, and the
// optional WarmStarter interface that early-stopping estimators need.

// Outputs is the number of prediction columns of the problem's models: K
// for Multiclass, 1 otherwise.
func (p *Problem) Outputs() int { return p.Task.Outputs(p.Classes) }

// Outputs is the number of prediction columns of a model of the task:
// classes for Multiclass, 1 otherwise.
func (t Task) Outputs(classes int) int {
	if t == Multiclass {
		return classes
	}
	return 1
}

// WarmStarter is the optional interface of a fitted Model that can be
// trained further: what early-stopping estimators (lazy-es) need. A backend
// says its models implement it with Capabilities.WarmStart; over the plugin
// transport the new model lives in the plugin process next to the old one.
type WarmStarter interface {
	Model
	// WarmStart returns a new fitted model of the same architecture and
	// task whose training starts at this model's fitted parameters theta_f
	// (keeping every fitted constant that is not a parameter, such as a
	// response scaling) and runs steps optimizer steps on the rows of x
	// with responses y: minibatches drawn as Fit draws them, seeded by seed,
	// and no early stopping (the optimizer state it starts from is the
	// backend's choice: mlp and cnn keep Adam's second moments from Fit).
	// steps <= 0 means
	// one epoch (one pass over the rows of x). The receiver is unchanged and
	// may be used concurrently; release the result with Release.
	WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (Model, error)
}

// WarmStopper is the optional interface of a WarmStarter whose warm start
// can end by early stopping (the warm-es estimator: Sun and Raskutti's
// warm start from the dropout solution, stopped on held-out rows). A
// backend says its models implement it with Capabilities.WarmStop; find it
// with As[WarmStopper].
type WarmStopper interface {
	WarmStarter
	// WarmStartStopped returns a new fitted model whose training starts at
	// this model's fitted parameters and runs epoch by epoch on the rows
	// of x with responses y, holding out the validation slice that Fit
	// holds out of as many rows (the same rows: they depend on the row
	// count and the model's seed, not on x), at most maxEpochs epochs and
	// stopping as Fit stops (the loss on the slice not improving for the
	// patience of the model's spec). The new model keeps the parameters
	// of the epoch with the lowest loss on the slice, the starting ones if
	// none improves on them; its FitReport says how many epochs ran.
	// Minibatches are drawn with a generator seeded by seed. The receiver
	// is unchanged and may be used concurrently; release the result with
	// Release.
	WarmStartStopped(ctx context.Context, x mat.Matrix, y []float64, maxEpochs int, seed int64) (Model, error)
}

// Persister is a model that can save what Fit learned and load it back: a
// model made by the same backend from the same ModelSpec, loaded with the
// state a fitted model saved, predicts (and, with gradients, differentiates)
// bit for bit as the fitted model does. A backend whose models are
// Persisters says so with Capabilities.Persist. The state is the
// backend's own encoding; the model file (WriteModel) adds the rest.
type Persister interface {
	Model
	// SaveState returns the fitted model's state.
	SaveState(ctx context.Context) ([]byte, error)
	// LoadState makes an unfitted model the fitted model whose SaveState
	// gave state. A state of another architecture or version is an error
	// wrapping ErrUsage.
	LoadState(ctx context.Context, state []byte) error
}
