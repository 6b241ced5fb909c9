package backendplugin

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// noDualServer is a server as it was before PredictDualShifted: it does not
// advertise it.
type noDualServer struct{ *server }

func (s noDualServer) Capabilities(ctx context.Context, e *pb.Empty) (*pb.CapabilitiesResponse, error) {
	resp, err := s.server.Capabilities(ctx, e)
	if resp != nil {
		resp.DualShift = false
	}
	return resp, err
}

// methodLog records the RPCs a server receives.
type methodLog struct {
	mu    sync.Mutex
	names []string
}

func (l *methodLog) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	l.mu.Lock()
	l.names = append(l.names, info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:])
	l.mu.Unlock()
	return h(ctx, req)
}

// PredictDualShifted over the transport is PredictShifted(x,
// JacobianTVec(xTrain, a)) in process, bit for bit, in one round trip
// when the plugin serves it and in two when it is an older plugin.
func TestPredictDualShifted(t *testing.T) {
	const p = 100
	ctx := context.Background()
	// inputs fits a model on b and draws the call's arguments, the same for
	// every backend.
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, []float64, *mat.Dense) {
		rng := rand.New(rand.NewPCG(3, 4))
		m, _, _ := fitted(t, b, rng, 300, p)
		return m, randDense(rng, 444, p), randVec(rng, 444), randDense(rng, 222, p)
	}
	m, xT, a, x := inputs(newLinear())
	dtheta, err := m.(framework.Kerneler).JacobianTVec(ctx, xT, a)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.(framework.Gradienter).PredictShifted(ctx, x, dtheta)
	if err != nil {
		t.Fatal(err)
	}
	for _, advertise := range []bool{true, false} {
		s := newServer(newLinear())
		var srv pb.BackendServer = s
		calls := []string{"PredictDualShifted"}
		if !advertise {
			srv = noDualServer{s}
			calls = []string{"JacobianTVec", "PredictShifted"}
		}
		log := &methodLog{}
		r := inProcessServer(t, "linear", srv, []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
		m, xT, a, x := inputs(r)
		ds, ok := m.(framework.DualShifter)
		if !ok {
			t.Fatal("the remote model is not a DualShifter")
		}
		log.names = nil
		got, err := ds.PredictDualShifted(ctx, xT, a, x)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got, want) {
			t.Errorf("advertised %v: remote PredictDualShifted differs from the in-process composition", advertise)
		}
		if strings.Join(log.names, ",") != strings.Join(calls, ",") {
			t.Errorf("advertised %v: calls %v, want %v", advertise, log.names, calls)
		}
	}
}

// noGramServer is a server as it was before Gram: it does not advertise it.
type noGramServer struct{ *server }

func (s noGramServer) Capabilities(ctx context.Context, e *pb.Empty) (*pb.CapabilitiesResponse, error) {
	resp, err := s.server.Capabilities(ctx, e)
	if resp != nil {
		resp.Gram = false
	}
	return resp, err
}

// Gram over the transport is framework.GramOf in process (the Jacobian's
// Gram and product), bit for bit: one Gram round trip when the plugin
// serves it, the Jacobian from an older plugin.
func TestGram(t *testing.T) {
	const p = 30
	ctx := context.Background()
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, []float64) {
		rng := rand.New(rand.NewPCG(5, 6))
		m, _, _ := fitted(t, b, rng, 300, p)
		return m, randDense(rng, 500, p), randVec(rng, 500)
	}
	m, x, e := inputs(newLinear())
	wantG, wantB, err := framework.GramOf(ctx, m.(framework.Gradienter), x, e)
	if err != nil {
		t.Fatal(err)
	}
	for _, advertise := range []bool{true, false} {
		s := newServer(newLinear())
		var srv pb.BackendServer = s
		calls := []string{"Gram"}
		if !advertise {
			srv = noGramServer{s}
			calls = []string{"Jacobian"}
		}
		log := &methodLog{}
		r := inProcessServer(t, "linear", srv, []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
		m, x, e := inputs(r)
		gr, ok := m.(framework.Grammer)
		if !ok {
			t.Fatal("the remote model is not a Grammer")
		}
		log.names = nil
		g, b, err := gr.Gram(ctx, x, e)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(g, wantG) || !mat.Equal(mat.NewVecDense(len(b), b), mat.NewVecDense(len(wantB), wantB)) {
			t.Errorf("advertised %v: remote Gram differs from the in-process one", advertise)
		}
		if strings.Join(log.names, ",") != strings.Join(calls, ",") {
			t.Errorf("advertised %v: calls %v, want %v", advertise, log.names, calls)
		}
	}
	// The packing of the upper triangle.
	a := mat.NewSymDense(3, []float64{1, 2, 3, 2, 4, 5, 3, 5, 6})
	if got, err := unpackUpper(3, packUpper(a)); err != nil || !mat.Equal(got, a) {
		t.Errorf("pack/unpack: %v, %v", got, err)
	}
	if _, err := unpackUpper(3, []float64{1, 2}); err == nil {
		t.Error("unpack of 2 values as 3 x 3: no error")
	}
}
