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
