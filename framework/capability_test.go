package framework_test

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// every has the methods of every optional interface; capable says with
// its Capabilities which of them work.
type every struct{}

func (every) Fit(context.Context, mat.Matrix, []float64) error         { return nil }
func (every) Predict(context.Context, mat.Matrix) (*mat.Dense, error)  { return nil, nil }
func (every) NumParams() int                                           { return 0 }
func (every) Jacobian(context.Context, mat.Matrix) (*mat.Dense, error) { return nil, nil }
func (every) Kernel(context.Context, mat.Matrix, mat.Matrix) (*mat.Dense, error) {
	return nil, nil
}
func (every) JacobianTVec(context.Context, mat.Matrix, []float64) ([]float64, error) {
	return nil, nil
}
func (every) PredictShifted(context.Context, mat.Matrix, []float64) (*mat.Dense, error) {
	return nil, nil
}
func (every) Gram(context.Context, mat.Matrix, []float64, []float64) (*mat.SymDense, []float64, error) {
	return nil, nil, nil
}
func (every) PredictShifts(context.Context, []framework.Shift) ([]*mat.Dense, error) {
	return nil, nil
}
func (every) WarmStart(context.Context, mat.Matrix, []float64, int, int64) (framework.Model, error) {
	return nil, nil
}

type capable struct {
	every
	caps framework.Capabilities
}

func (c capable) Capabilities() framework.Capabilities { return c.caps }

func TestAsConsultsCapabilities(t *testing.T) {
	as := func(m framework.Model) [5]bool {
		_, g := framework.As[framework.Gradienter](m)
		_, k := framework.As[framework.Kerneler](m)
		_, w := framework.As[framework.WarmStarter](m)
		_, gr := framework.As[framework.GramBuilder](m)
		_, b := framework.As[framework.ShiftBatcher](m)
		return [5]bool{g, k, w, gr, b}
	}
	for _, tc := range []struct {
		m    framework.Model
		want [5]bool
	}{
		{every{}, [5]bool{true, true, true, true, true}}, // not Capable: its methods say
		{capable{}, [5]bool{}},
		{capable{caps: framework.Capabilities{Gradients: true}}, [5]bool{true, false, false, true, true}},
		{capable{caps: framework.Capabilities{Kernel: true, WarmStart: true}}, [5]bool{false, true, true, false, false}},
	} {
		if got := as(tc.m); got != tc.want {
			t.Errorf("%T %+v: Gradienter, Kerneler, WarmStarter, GramBuilder, ShiftBatcher = %v, want %v", tc.m, tc.m, got, tc.want)
		}
	}
}

// withProducts is every with Jacobian products.
type withProducts struct{ capable }

func (withProducts) JacobianMul(context.Context, mat.Matrix, *mat.Dense) (*mat.Dense, error) {
	return nil, nil
}
func (withProducts) JacobianTMul(context.Context, mat.Matrix, *mat.Dense) (*mat.Dense, error) {
	return nil, nil
}

// As[JacobianMultiplier] needs MatrixFree with Gradients from a Capable
// model, and the methods from any.
func TestAsJacobianMultiplier(t *testing.T) {
	for _, tc := range []struct {
		m    framework.Model
		want bool
	}{
		{every{}, false},
		{capable{caps: framework.Capabilities{Gradients: true, MatrixFree: true}}, false},
		{withProducts{capable{caps: framework.Capabilities{Gradients: true}}}, false},
		{withProducts{capable{caps: framework.Capabilities{MatrixFree: true}}}, false},
		{withProducts{capable{caps: framework.Capabilities{Gradients: true, MatrixFree: true}}}, true},
	} {
		if _, got := framework.As[framework.JacobianMultiplier](tc.m); got != tc.want {
			t.Errorf("%T %+v: As[JacobianMultiplier] = %v, want %v", tc.m, tc.m, got, tc.want)
		}
	}
}

// withSingle is withProducts with a single-precision view.
type withSingle struct{ withProducts }

func (s withSingle) SinglePrecision() framework.JacobianMultiplier { return s.withProducts }

// As[SinglePrecisioner] needs SinglePrecision with MatrixFree and Gradients
// from a Capable model, and the method from any.
func TestAsSinglePrecisioner(t *testing.T) {
	all := framework.Capabilities{Gradients: true, MatrixFree: true, SinglePrecision: true}
	for _, tc := range []struct {
		m    framework.Model
		want bool
	}{
		{withProducts{capable{caps: all}}, false},
		{withSingle{withProducts{capable{caps: framework.Capabilities{Gradients: true, MatrixFree: true}}}}, false},
		{withSingle{withProducts{capable{caps: framework.Capabilities{Gradients: true, SinglePrecision: true}}}}, false},
		{withSingle{withProducts{capable{caps: all}}}, true},
	} {
		if _, got := framework.As[framework.SinglePrecisioner](tc.m); got != tc.want {
			t.Errorf("%T %+v: As[SinglePrecisioner] = %v, want %v", tc.m, tc.m, got, tc.want)
		}
	}
}

// MultiplierOf gives the single-precision view only when asked for and
// offered, and the model's own products otherwise.
func TestMultiplierOf(t *testing.T) {
	all := framework.Capabilities{Gradients: true, MatrixFree: true, SinglePrecision: true}
	single := withSingle{withProducts{capable{caps: all}}}
	double := withProducts{capable{caps: all}}
	for _, tc := range []struct {
		m      framework.Model
		single bool
		want   framework.JacobianMultiplier
	}{
		{single, true, single.withProducts},
		{single, false, single},
		{double, true, double},
		{double, false, double},
	} {
		got, ok := jacobian.MultiplierOf(tc.m, tc.single)
		if !ok || got != tc.want {
			t.Errorf("%T, single %v: MultiplierOf = %T %v, want %T", tc.m, tc.single, got, ok, tc.want)
		}
	}
	if _, ok := jacobian.MultiplierOf(capable{caps: all}, true); ok {
		t.Error("MultiplierOf: a model without products has none")
	}
}

// withSingleKernel is capable (every's kernel) with a single-precision
// kernel: a distinct Kerneler, so that KernelerOf's choice shows.
type withSingleKernel struct{ capable }

type singleKernelView struct{ every }

func (withSingleKernel) SingleKernel() framework.Kerneler { return singleKernelView{} }

// As[SingleKerneler] needs SingleKernel with Kernel and Gradients from a
// Capable model, and the method from any; KernelerOf gives the
// single-precision view only when asked for and offered, the model's own
// kernel otherwise, and none without one.
func TestKernelerOf(t *testing.T) {
	all := framework.Capabilities{Gradients: true, Kernel: true, SingleKernel: true}
	for _, tc := range []struct {
		m    framework.Model
		want bool
	}{
		{capable{caps: all}, false},
		{withSingleKernel{capable{caps: framework.Capabilities{Gradients: true, Kernel: true}}}, false},
		{withSingleKernel{capable{caps: framework.Capabilities{Gradients: true, SingleKernel: true}}}, false},
		{withSingleKernel{capable{caps: framework.Capabilities{Kernel: true, SingleKernel: true}}}, false},
		{withSingleKernel{capable{caps: all}}, true},
	} {
		if _, got := framework.As[framework.SingleKerneler](tc.m); got != tc.want {
			t.Errorf("%T %+v: As[SingleKerneler] = %v, want %v", tc.m, tc.m, got, tc.want)
		}
	}
	single := withSingleKernel{capable{caps: all}}
	double := capable{caps: all}
	for _, tc := range []struct {
		m      framework.Model
		single bool
		want   framework.Kerneler
	}{
		{single, true, singleKernelView{}},
		{single, false, single},
		{double, true, double},
		{double, false, double},
	} {
		got, ok := jacobian.KernelerOf(tc.m, tc.single)
		if !ok || got != tc.want {
			t.Errorf("%T, single %v: KernelerOf = %T %v, want %T", tc.m, tc.single, got, ok, tc.want)
		}
	}
	if _, ok := jacobian.KernelerOf(capable{caps: framework.Capabilities{Gradients: true, SingleKernel: true}}, true); ok {
		t.Error("KernelerOf: a model without Kernel has none")
	}
}
