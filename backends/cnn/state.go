package cnn

import (
	"context"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

var _ framework.Persister = (*Model)(nil)

// SaveState implements framework.Persister (nn.State).
func (md *Model) SaveState(context.Context) ([]byte, error) {
	return nn.SaveState("cnn", md.fitted, nn.State{Mu: md.head.Mu, Sd: md.head.Sd, Theta: md.theta, Epochs: md.epochs,
		Losses: md.losses, Report: md.report, Adam: md.adam.Save()})
}

// LoadState implements framework.Persister: the model becomes the fitted
// model that saved the state (same options, so the same architecture).
func (md *Model) LoadState(_ context.Context, b []byte) error {
	s, adam, err := nn.LoadState("cnn", md.fitted, b, md.m, md.cfg.train.LR)
	if err != nil {
		return err
	}
	md.head.Mu, md.head.Sd = s.Mu, s.Sd
	md.theta, md.epochs, md.losses = s.Theta, s.Epochs, s.Losses
	md.report, md.adam = s.Report, adam
	md.fitted = true
	return nil
}
