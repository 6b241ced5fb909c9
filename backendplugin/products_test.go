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
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// Jacobian products over the transport are jacobian.Products in
// process, bit for bit, for a batch of vectors, one round trip each (the
// plugin forms them from the Jacobian of a model without its own).
func TestJacobianProducts(t *testing.T) {
	const p = 20
	ctx := context.Background()
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, *mat.Dense, *mat.Dense) {
		rng := rand.New(rand.NewPCG(7, 8))
		m, _, _ := fitted(t, b, rng, 300, p)
		return m, randDense(rng, 400, p), randDense(rng, p, 3), randDense(rng, 400, 3)
	}
	m, x, v, u := inputs(newLinear())
	wantV, err := jacobian.Products(ctx, m.(framework.Gradienter), x, v, false)
	if err != nil {
		t.Fatal(err)
	}
	wantU, err := jacobian.Products(ctx, m.(framework.Gradienter), x, u, true)
	if err != nil {
		t.Fatal(err)
	}
	{
		calls := []string{"JacobianProduct", "JacobianProduct"}
		log := &methodLog{}
		r := inProcessServer(t, "linear", newServer(newLinear()), []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
		m, x, v, u := inputs(r)
		jm, ok := m.(framework.JacobianMultiplier)
		if !ok {
			t.Fatal("the remote model has no Jacobian products")
		}
		if _, ok := framework.As[framework.JacobianMultiplier](m); ok {
			t.Error("As[JacobianMultiplier]: the fake backend does not declare MatrixFree")
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
			t.Errorf("the products differ from the in-process ones")
		}
		names := append([]string(nil), log.names...)
		slices.Sort(names)
		if strings.Join(names, ",") != strings.Join(calls, ",") {
			t.Errorf("calls %v, want %v", names, calls)
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
	return jacobian.Products(ctx, m.linModel, x, v, false)
}

func (m singleModelFake) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return jacobian.Products(ctx, m.linModel, x, u, true)
}

func (m singleModelFake) SinglePrecision() framework.JacobianMultiplier { return roundedFake{m} }

type roundedFake struct{ m singleModelFake }

func (r roundedFake) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return rounded(r.m.JacobianMul(ctx, x, v))
}

func (r roundedFake) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return rounded(r.m.JacobianTMul(ctx, x, u))
}

// PredictPrepared is the predictions rounded, as a single-precision
// pass's would be.
func (r roundedFake) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return rounded(r.m.Predict(ctx, x))
}

func rounded(d *mat.Dense, err error) (*mat.Dense, error) {
	if err != nil {
		return nil, err
	}
	d.Apply(func(_, _ int, v float64) float64 { return float64(float32(v)) }, d)
	return d, nil
}

// Single-precision products over the transport are the model's in
// process, bit for bit; the double ones stay double.
func TestSinglePrecisionProducts(t *testing.T) {
	const p = 20
	ctx := context.Background()
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, *mat.Dense, *mat.Dense) {
		rng := rand.New(rand.NewPCG(7, 9))
		m, _, _ := fitted(t, b, rng, 300, p)
		return m, randDense(rng, 400, p), randDense(rng, p, 3), randDense(rng, 400, 3)
	}
	m, x, v, u := inputs(singleBackend{newLinear()})
	local, ok := framework.As[framework.SinglePrecisioner](m)
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
	{
		r := inProcess(t, "single", singleBackend{newLinear()})
		m, _, _, _ := inputs(r)
		jm, ok := framework.As[framework.JacobianMultiplier](m)
		if !ok {
			t.Fatal("the remote model has no Jacobian products")
		}
		if got := products(jm); !mat.Equal(got[0], wantDouble[0]) || !mat.Equal(got[1], wantDouble[1]) {
			t.Errorf("the double products differ from the in-process ones")
		}
		sp, ok := framework.As[framework.SinglePrecisioner](m)
		if !ok {
			t.Fatal("the remote model is not a SinglePrecisioner")
		}
		if got := products(sp.SinglePrecision()); !mat.Equal(got[0], wantSingle[0]) || !mat.Equal(got[1], wantSingle[1]) {
			t.Errorf("the single-precision products differ from the in-process ones")
		}
		// The view's prepared predictions are the single-precision pass's
		// (the fake's rounded ones); the model's own stay double.
		pp, ok := sp.SinglePrecision().(framework.PreparedPredictor)
		if !ok {
			t.Fatal("the remote single-precision view is not a PreparedPredictor")
		}
		wantPred, err := local.SinglePrecision().(framework.PreparedPredictor).PredictPrepared(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		double, err := m.Predict(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		if mat.Equal(wantPred, double) {
			t.Fatal("the fake's single-precision predictions equal its double ones")
		}
		if got, err := pp.PredictPrepared(ctx, x); err != nil || !mat.Equal(got, wantPred) {
			t.Errorf("the single-precision prepared predictions differ from the in-process ones (err %v)", err)
		}
		if got, err := m.(framework.PreparedPredictor).PredictPrepared(ctx, x); err != nil || !mat.Equal(got, double) {
			t.Errorf("the double prepared predictions differ from Predict (err %v)", err)
		}
	}
}
