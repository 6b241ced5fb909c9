package mlp

import (
	"context"
	"github.com/lazyvi/lazyvi/framework"
)

func init() {
	framework.RegisterBackend("mlp", Backend{})
}

// Backend builds ReLU multilayer perceptrons. The zero value is ready to use;
// it is registered as "mlp".
type Backend struct{}

var _ framework.Backend = Backend{}

// PausesFits says that a fit calls pause.Point between its steps
// (nn.Trainer.Run): pause.Pauser.
func (Backend) PausesFits() {}

// Capabilities reports gradients, the structured kernel, binary and
// multiclass classification, warm starts and matrix-free Jacobian products
// (with a single-precision form), and a single-precision kernel.
func (Backend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Gradients: true, Kernel: true, Classification: true, Multiclass: true, WarmStart: true, WarmStop: true, Persist: true, MatrixFree: true, SinglePrecision: true, SingleKernel: true}
}

// Options lists the recognised ModelSpec.Options keys with their defaults.
func (Backend) Options() []framework.OptionInfo {
	out := make([]framework.OptionInfo, len(optionInfo))
	copy(out, optionInfo)
	return out
}

// New returns an untrained *Model for spec.
func (Backend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	return NewModel(spec)
}
