package mlp

import (
	"context"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/backends/internal/state"
	"github.com/lazyvi/lazyvi/framework"
)

// savedState is what Fit learned, for framework.Persister.
type savedState struct {
	Mu, Sd float64
	Theta  []float64
	Epochs int
	Losses []float64
	Report framework.FitReport
	Adam   *nn.AdamState
}

const stateVersion = 1

var _ framework.Persister = (*Model)(nil)

// SaveState implements framework.Persister.
func (md *Model) SaveState(context.Context) ([]byte, error) {
	if !md.fitted {
		return nil, framework.Usagef("mlp: save state: model is not fitted")
	}
	return state.Encode("mlp", stateVersion, savedState{Mu: md.head.Mu, Sd: md.head.Sd, Theta: md.theta, Epochs: md.epochs, Losses: md.losses,
		Report: md.report, Adam: md.adam.Save()})
}

// LoadState implements framework.Persister: the model becomes the fitted
// model that saved the state (same options, so the same architecture).
func (md *Model) LoadState(_ context.Context, b []byte) error {
	if md.fitted {
		return framework.Usagef("mlp: load state: model is already fitted")
	}
	var s savedState
	if err := state.Decode("mlp", stateVersion, b, &s); err != nil {
		return err
	}
	if err := state.CheckLen("mlp", "parameters", len(s.Theta), md.m); err != nil {
		return err
	}
	adam, ok := nn.LoadAdam(md.cfg.train.LR, s.Adam, md.m)
	if !ok {
		return framework.Usagef("%s: load state: the optimizer state does not fit the parameters", "mlp")
	}
	md.head.Mu, md.head.Sd = s.Mu, s.Sd
	md.report, md.adam = s.Report, adam
	md.theta, md.epochs, md.losses = s.Theta, s.Epochs, s.Losses
	md.fitted = true
	md.memo.clear()
	return nil
}
