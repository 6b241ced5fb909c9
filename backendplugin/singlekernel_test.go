package backendplugin

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
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

// oldKernelServer is a server as it was before single-precision kernels:
// it does not advertise them and does not know the requests' single
// fields (it drops them, counting those it was sent).
type oldKernelServer struct {
	*server
	sent *atomic.Int64
}

func (s oldKernelServer) Capabilities(ctx context.Context, e *pb.Empty) (*pb.CapabilitiesResponse, error) {
	resp, err := s.server.Capabilities(ctx, e)
	if resp != nil {
		resp.SingleKernel = false
	}
	return resp, err
}

func (s oldKernelServer) drop(single *bool) {
	if *single {
		s.sent.Add(1)
	}
	*single = false
}

func (s oldKernelServer) Kernel(ctx context.Context, req *pb.KernelRequest) (*pb.Matrix, error) {
	s.drop(&req.Single)
	return s.server.Kernel(ctx, req)
}

func (s oldKernelServer) JacobianTVec(ctx context.Context, req *pb.JacobianTVecRequest) (*pb.Vector, error) {
	s.drop(&req.Single)
	return s.server.JacobianTVec(ctx, req)
}

func (s oldKernelServer) PredictShifts(ctx context.Context, req *pb.PredictShiftsRequest) (*pb.PredictShiftsResponse, error) {
	for _, sh := range req.Shifts {
		s.drop(&sh.Single)
	}
	return s.server.PredictShifts(ctx, req)
}

// Single-precision kernels over the transport are the model's in process,
// bit for bit, when the plugin advertises them: Kernel and JacobianTVec of
// the remote model's SingleKernel, and dual-form shifts with Single set;
// the double ones stay double (a client from before never sets single). A
// plugin from before (not advertising the capability, not knowing the
// fields) leaves the remote model without the capability, is never sent
// single, and answers shifts with Single by the double-precision Phi^T a.
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
		preds, err := framework.PredictShifts(ctx, g, shifts)
		if err != nil {
			t.Fatal(err)
		}
		return answers{km, tv, preds}
	}
	same := func(got, want answers) bool {
		return mat.Equal(got.k, want.k) && floats.Equal(got.g, want.g) && mat.Equal(got.preds[0], want.preds[0])
	}
	m, x, a, shifts := inputs(singleKernelBackend{newLinear()})
	sk, ok := framework.AsSingleKerneler(m)
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
	for _, advertise := range []bool{true, false} {
		s := newServer(singleKernelBackend{newLinear()})
		var srv pb.BackendServer = s
		sent := new(atomic.Int64)
		if !advertise {
			srv = oldKernelServer{s, sent}
		}
		r := inProcessServer(t, "single-kernel", srv, nil)
		rm, _, _, _ := inputs(r)
		rg, rk := rm.(framework.Gradienter), rm.(framework.Kerneler)
		if got := ask(rk, rg, x, a, double); !same(got, wantDouble) {
			t.Errorf("advertised %v: the double kernel, product or shifted prediction differs from the in-process one", advertise)
		}
		rsk, ok := framework.AsSingleKerneler(rm)
		if ok != advertise {
			t.Fatalf("advertised %v: AsSingleKerneler = %v", advertise, ok)
		}
		k, ok := framework.KernelerOf(rm, true)
		if !ok {
			t.Fatal("the remote model has no kernel")
		}
		want := wantDouble
		if advertise {
			want = wantSingle
			if k != rsk.SingleKernel() {
				t.Error("KernelerOf(single) is not the remote model's SingleKernel")
			}
		}
		if got := ask(k, rg, x, a, shifts); !same(got, want) {
			t.Errorf("advertised %v: the single-precision kernel, product or shifted prediction is not the in-process one", advertise)
		}
		if n := sent.Load(); n > 0 {
			t.Errorf("a plugin that does not advertise single kernels was sent single %d times", n)
		}
	}
}
