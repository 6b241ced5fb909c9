package cnn

import (
	"context"

	"github.com/lazyvi/lazyvi/framework"
)

func init() { framework.RegisterBackend("cnn", Backend{}) }

// Backend builds small convolutional networks. The zero value is ready to
// use; it is registered as "cnn".
type Backend struct{}

var _ framework.Backend = Backend{}

// PausesFits says that a fit calls pause.Point between its steps
// (nn.Trainer.Run): pause.Pauser.
func (Backend) PausesFits() {}

// Capabilities reports gradients, binary and multiclass classification,
// warm starts and matrix-free Jacobian products (no structured kernel).
func (Backend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Gradients: true, Classification: true, Multiclass: true, WarmStart: true, WarmStop: true, Persist: true, MatrixFree: true}
}

// Options lists the recognised ModelSpec.Options keys with their defaults.
func (Backend) Options() []framework.OptionInfo {
	return append([]framework.OptionInfo(nil), optionInfo...)
}

// New returns an untrained *Model for spec.
func (Backend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	return NewModel(spec)
}
