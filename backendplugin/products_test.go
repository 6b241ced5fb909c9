package backendplugin

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// noProductsServer is a server as it was before JacobianMul and
// JacobianTMul: it does not advertise them.
type noProductsServer struct{ *server }

func (s noProductsServer) Capabilities(ctx context.Context, e *pb.Empty) (*pb.CapabilitiesResponse, error) {
	resp, err := s.server.Capabilities(ctx, e)
	if resp != nil {
		resp.JacobianProducts = false
	}
	return resp, err
}

// Jacobian products over the transport are framework.JacobianProducts in
// process, bit for bit, for a batch of vectors: one round trip each when
// the plugin serves them, the Jacobian from an older plugin.
func TestJacobianProducts(t *testing.T) {
	const p = 20
	ctx := context.Background()
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, *mat.Dense, *mat.Dense) {
		rng := rand.New(rand.NewPCG(7, 8))
		m, _, _ := fitted(t, b, rng, 300, p)
		return m, randDense(rng, 400, p), randDense(rng, p, 3), randDense(rng, 400, 3)
	}
	m, x, v, u := inputs(newLinear())
	wantV, err := framework.JacobianProducts(ctx, m.(framework.Gradienter), x, v, false)
	if err != nil {
		t.Fatal(err)
	}
	wantU, err := framework.JacobianProducts(ctx, m.(framework.Gradienter), x, u, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, advertise := range []bool{true, false} {
		s := newServer(newLinear())
		var srv pb.BackendServer = s
		calls := []string{"JacobianMul", "JacobianTMul"}
		if !advertise {
			srv = noProductsServer{s}
			calls = []string{"Jacobian", "Jacobian"}
		}
		log := &methodLog{}
		r := inProcessServer(t, "linear", srv, []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
		m, x, v, u := inputs(r)
		jm, ok := m.(framework.JacobianMultiplier)
		if !ok {
			t.Fatal("the remote model has no Jacobian products")
		}
		if _, ok := framework.AsJacobianMultiplier(m); ok {
			t.Error("AsJacobianMultiplier: the fake backend does not declare MatrixFree")
		}
		log.names = nil
		gotV, err := jm.JacobianMul(ctx, x, v)
		if err != nil {
			t.Fatal(err)
		}
		gotU, err := jm.JacobianTMul(ctx, x, u)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(gotV, wantV) || !mat.Equal(gotU, wantU) {
			t.Errorf("advertised %v: the products differ from the in-process ones", advertise)
		}
		names := append([]string(nil), log.names...)
		slices.Sort(names)
		if strings.Join(names, ",") != strings.Join(calls, ",") {
			t.Errorf("advertised %v: calls %v, want %v", advertise, names, calls)
		}
	}
}

// singleBackend is the fake linear backend with matrix-free products and
// single-precision ones (the double products rounded to float32, so that
// they differ from them).
type singleBackend struct{ *linear }

func (b singleBackend) Capabilities() framework.Capabilities {
	c := b.linear.Capabilities()
	c.MatrixFree, c.SinglePrecision = true, true
	return c
}

func (b singleBackend) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.linear.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return singleModelFake{m.(*linModel)}, nil
}

type singleModelFake struct{ *linModel }

func (m singleModelFake) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return framework.JacobianProducts(ctx, m.linModel, x, v, false)
}

func (m singleModelFake) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return framework.JacobianProducts(ctx, m.linModel, x, u, true)
}

func (m singleModelFake) SinglePrecision() framework.JacobianMultiplier { return roundedFake{m} }

type roundedFake struct{ m singleModelFake }

func (r roundedFake) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return rounded(r.m.JacobianMul(ctx, x, v))
}

func (r roundedFake) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return rounded(r.m.JacobianTMul(ctx, x, u))
}

func rounded(d *mat.Dense, err error) (*mat.Dense, error) {
	if err != nil {
		return nil, err
	}
	d.Apply(func(_, _ int, v float64) float64 { return float64(float32(v)) }, d)
	return d, nil
}

// noSingleServer is a server as it was before single-precision products:
// it does not advertise them (and would ignore JacobianProductRequest's
// single, a field it does not know).
type noSingleServer struct{ *server }

func (s noSingleServer) Capabilities(ctx context.Context, e *pb.Empty) (*pb.CapabilitiesResponse, error) {
	resp, err := s.server.Capabilities(ctx, e)
	if resp != nil {
		resp.SinglePrecision = false
	}
	return resp, err
}

// Single-precision products over the transport are the model's in
// process, bit for bit, when the plugin advertises them; the double ones
// stay double (a client that does not know the capability never sets
// single); a plugin that does not advertise them leaves the remote model
// without the capability.
func TestSinglePrecisionProducts(t *testing.T) {
	const p = 20
	ctx := context.Background()
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, *mat.Dense, *mat.Dense) {
		rng := rand.New(rand.NewPCG(7, 9))
		m, _, _ := fitted(t, b, rng, 300, p)
		return m, randDense(rng, 400, p), randDense(rng, p, 3), randDense(rng, 400, 3)
	}
	m, x, v, u := inputs(singleBackend{newLinear()})
	local, ok := framework.AsSinglePrecisioner(m)
	if !ok {
		t.Fatal("the fake model is not a SinglePrecisioner")
	}
	products := func(jm framework.JacobianMultiplier) [2]*mat.Dense {
		t.Helper()
		pv, err := jm.JacobianMul(ctx, x, v)
		if err != nil {
			t.Fatal(err)
		}
		pu, err := jm.JacobianTMul(ctx, x, u)
		if err != nil {
			t.Fatal(err)
		}
		return [2]*mat.Dense{pv, pu}
	}
	wantDouble, wantSingle := products(local.(framework.JacobianMultiplier)), products(local.SinglePrecision())
	if mat.Equal(wantDouble[0], wantSingle[0]) {
		t.Fatal("the fake's single-precision products equal its double ones")
	}
	for _, advertise := range []bool{true, false} {
		s := newServer(singleBackend{newLinear()})
		var srv pb.BackendServer = s
		if !advertise {
			srv = noSingleServer{s}
		}
		r := inProcessServer(t, "single", srv, nil)
		m, _, _, _ := inputs(r)
		jm, ok := framework.AsJacobianMultiplier(m)
		if !ok {
			t.Fatal("the remote model has no Jacobian products")
		}
		if got := products(jm); !mat.Equal(got[0], wantDouble[0]) || !mat.Equal(got[1], wantDouble[1]) {
			t.Errorf("advertised %v: the double products differ from the in-process ones", advertise)
		}
		sp, ok := framework.AsSinglePrecisioner(m)
		if ok != advertise {
			t.Fatalf("advertised %v: AsSinglePrecisioner = %v", advertise, ok)
		}
		if !ok {
			continue
		}
		if got := products(sp.SinglePrecision()); !mat.Equal(got[0], wantSingle[0]) || !mat.Equal(got[1], wantSingle[1]) {
			t.Errorf("the single-precision products differ from the in-process ones")
		}
	}
}
