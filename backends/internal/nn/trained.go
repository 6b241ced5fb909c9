package nn

import (
	"context"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// Trained is what Fit sets on a network (WarmStart and LoadState too) and
// only reads afterwards: the parameters, whether the network is fitted,
// the epochs run and the monitored loss after each, how Fit ended and the
// optimizer state warm starts resume from. The mlp and cnn models hold one
// (unexported, so that their users cannot change it) and answer Params,
// Epochs, LossCurve, FitReport and framework.Persister from it.
type Trained struct {
	Theta     []float64
	Fitted    bool
	EpochsRun int
	Losses    []float64
	Report    framework.FitReport
	Adam      *Adam
}

// Finish records what Trainer.Fit returned (res, err) for the trainer tr
// whose validation slice had valid rows: the epochs and their losses
// always, and when err is nil the report, the optimizer state and the kept
// parameters res.Best, the network then fitted. It returns err.
func (t *Trained) Finish(res FitResult, err error, tr *Trainer, valid int) error {
	t.Losses, t.EpochsRun = res.Losses, len(res.Losses)
	if err != nil {
		return err
	}
	t.Report = FitReport(res, valid)
	t.Adam = tr.Optimizer()
	t.Theta = res.Best
	t.Fitted = true
	return nil
}

// Params returns a copy of the fitted parameters in the network's
// documented order.
func (t *Trained) Params() []float64 { return append([]float64(nil), t.Theta...) }

// Epochs returns the number of epochs Fit ran.
func (t *Trained) Epochs() int { return t.EpochsRun }

// LossCurve returns the loss early stopping watched after each epoch of
// Fit: on the validation slice (option valid), or on the full training set
// without one (mean squared error on the standardised response for
// regression, mean log-loss for binary and multiclass).
func (t *Trained) LossCurve() []float64 { return append([]float64(nil), t.Losses...) }

// FitReport implements framework.FitReporter: epochs run, what ended
// training, and the loss on the validation slice at the kept parameters.
func (t *Trained) FitReport() framework.FitReport { return t.Report }

// Encode is framework.Persister's SaveState for a network of the backend
// named name with head h: State, with the head's response scaling.
func (t *Trained) Encode(name string, h Head) ([]byte, error) {
	return SaveState(name, t.Fitted, State{Mu: h.Mu, Sd: h.Sd, Theta: t.Theta, Epochs: t.EpochsRun,
		Losses: t.Losses, Report: t.Report, Adam: t.Adam.Save()})
}

// Decode is framework.Persister's LoadState for an unfitted network of m
// parameters trained with learning rate lr: t becomes the fitted network
// that Encode saved (LoadState's checks), and h gets its response scaling.
func (t *Trained) Decode(name string, h *Head, b []byte, m int, lr float64) error {
	s, adam, err := LoadState(name, t.Fitted, b, m, lr)
	if err != nil {
		return err
	}
	h.Mu, h.Sd = s.Mu, s.Sd
	*t = Trained{Theta: s.Theta, Fitted: true, EpochsRun: s.Epochs, Losses: s.Losses, Report: s.Report, Adam: adam}
	return nil
}

// PredictArgs makes the checks every prediction of the network name makes
// (fitted, ctx live, x with cols columns) and returns x as a row-major
// matrix and the parameters to predict at: Theta, or Theta + dtheta when
// shifted.
func (t *Trained) PredictArgs(ctx context.Context, name string, shifted bool, dtheta []float64, x mat.Matrix, cols int) ([]float64, blas64.General, error) {
	if err := Ready(ctx, name, t.Fitted); err != nil {
		return nil, blas64.General{}, err
	}
	theta := t.Theta
	if shifted {
		var err error
		if theta, err = Shifted(name, theta, dtheta); err != nil {
			return nil, blas64.General{}, err
		}
	}
	xg, err := Input(name, x, cols)
	return theta, xg, err
}
