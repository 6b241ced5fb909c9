package backendplugin

import (
	"context"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// singleKernelBackend is the fake linear backend with a single-precision
// kernel and transposed product (the double ones rounded to float32, so
// that they differ from them).
type singleKernelBackend struct{ *linear }

func (b singleKernelBackend) Capabilities() framework.Capabilities {
	c := b.linear.Capabilities()
	c.SingleKernel = true
	return c
}

func (b singleKernelBackend) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.linear.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return singleKernelFake{m.(*linModel)}, nil
}

type singleKernelFake struct{ *linModel }

func (m singleKernelFake) SingleKernel() framework.Kerneler { return roundedKernel{m.linModel} }

type roundedKernel struct{ m *linModel }

func (r roundedKernel) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return rounded(r.m.Kernel(ctx, x1, x2))
}

func (r roundedKernel) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	g, err := r.m.JacobianTVec(ctx, x, a)
	for i, v := range g {
		g[i] = float64(float32(v))
	}
	return g, err
}

// Single-precision kernels over the transport are the model's in process,
// bit for bit: Kernel and JacobianTVec of the remote model's SingleKernel,
// and dual-form shifts with Single set, also in a batch that mixes them
// with double ones; the double ones stay double.
func TestSingleKernel(t *testing.T) {
	const p = 20
	ctx := context.Background()
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, []float64, []framework.Shift) {
		rng := rand.New(rand.NewPCG(5, 6))
		m, _, _ := fitted(t, b, rng, 300, p)
		x := randDense(rng, 200, p)
		a := randVec(rng, 200)
		return m, x, a, []framework.Shift{{X: randDense(rng, 50, p), XTrain: x, A: a, Single: true}}
	}
	type answers struct {
		k     *mat.Dense
		g     []float64
		preds []*mat.Dense
	}
	ask := func(k framework.Kerneler, g framework.Gradienter, x *mat.Dense, a []float64, shifts []framework.Shift) answers {
		t.Helper()
		km, err := k.Kernel(ctx, x, nil)
		if err != nil {
			t.Fatal(err)
		}
		tv, err := k.JacobianTVec(ctx, x, a)
		if err != nil {
			t.Fatal(err)
		}
		preds, err := jacobian.PredictShifts(ctx, g, shifts)
		if err != nil {
			t.Fatal(err)
		}
		return answers{km, tv, preds}
	}
	same := func(got, want answers) bool {
		return mat.Equal(got.k, want.k) && floats.Equal(got.g, want.g) && mat.Equal(got.preds[0], want.preds[0])
	}
	m, x, a, shifts := inputs(singleKernelBackend{newLinear()})
	sk, ok := framework.As[framework.SingleKerneler](m)
	if !ok {
		t.Fatal("the fake model is not a SingleKerneler")
	}
	g := m.(framework.Gradienter)
	double := []framework.Shift{shifts[0]}
	double[0].Single = false
	wantDouble := ask(m.(framework.Kerneler), g, x, a, double)
	wantSingle := ask(sk.SingleKernel(), g, x, a, shifts)
	if mat.Equal(wantDouble.k, wantSingle.k) || floats.Equal(wantDouble.g, wantSingle.g) || mat.Equal(wantDouble.preds[0], wantSingle.preds[0]) {
		t.Fatal("the fake's single-precision kernel, product or shifted prediction equals its double one")
	}
	r := inProcess(t, "single-kernel", singleKernelBackend{newLinear()})
	rm, _, _, _ := inputs(r)
	rg, rk := rm.(framework.Gradienter), rm.(framework.Kerneler)
	if got := ask(rk, rg, x, a, double); !same(got, wantDouble) {
		t.Errorf("the double kernel, product or shifted prediction differs from the in-process one")
	}
	rsk, ok := framework.As[framework.SingleKerneler](rm)
	if !ok {
		t.Fatal("the remote model is not a SingleKerneler")
	}
	k, ok := jacobian.KernelerOf(rm, true)
	if !ok || k != rsk.SingleKernel() {
		t.Fatal("KernelerOf(single) is not the remote model's SingleKernel")
	}
	if got := ask(k, rg, x, a, shifts); !same(got, wantSingle) {
		t.Errorf("the single-precision kernel, product or shifted prediction is not the in-process one")
	}
	mixed, err := jacobian.PredictShifts(ctx, rg, []framework.Shift{shifts[0], double[0], shifts[0]})
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(mixed[0], wantSingle.preds[0]) || !mat.Equal(mixed[1], wantDouble.preds[0]) || !mat.Equal(mixed[2], wantSingle.preds[0]) {
		t.Error("a batch mixing single and double shifts answered otherwise than each alone")
	}
}
