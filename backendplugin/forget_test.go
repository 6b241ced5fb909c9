package backendplugin

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// forgetting is the fake linear backend whose models record what they are
// told to forget (framework.Forgetter).
type forgetting struct {
	*linear
	mu     sync.Mutex
	forgot []mat.Matrix
}

type forgettingModel struct {
	*linModel
	b *forgetting
}

func (m forgettingModel) Forget(xs ...mat.Matrix) {
	m.b.mu.Lock()
	m.b.forgot = append(m.b.forgot, xs...)
	m.b.mu.Unlock()
}

func (b *forgetting) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.linear.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return forgettingModel{linModel: m.(*linModel), b: b}, nil
}

// TestForgetReleases: a remote model's Forget releases the handle of the
// matrix sent from the storage it is given at once (not that of another
// matrix of the same values), and the server, releasing the matrix it
// kept, has its models forget it (a network's memo then drops the signals
// of those rows); a matrix the client kept no handle for is no call at
// all.
func TestForgetReleases(t *testing.T) {
	b := &forgetting{linear: newLinear()}
	srv := newServer(b)
	r := inProcessServer(t, "forgetting", srv, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	m, _, _ := fitted(t, r, rng, 50, 3)
	x := randDense(rng, minKeptElems/3+1, 3) // over minKeptElems values: sent under a handle
	if _, err := m.(framework.Gradienter).Predict(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	if srv.kept.len() != 1 {
		t.Fatalf("the server keeps %d matrices after the call, want x's", srv.kept.len())
	}
	jacobian.Forget(m, randDense(rng, 2, 3)) // too small for a handle
	b.mu.Lock()
	if len(b.forgot) != 0 {
		t.Errorf("a matrix sent without a handle was forgotten on the server: %d", len(b.forgot))
	}
	b.mu.Unlock()
	jacobian.Forget(m, mat.DenseCopyOf(x)) // the same values, another matrix
	if srv.kept.len() != 1 {
		t.Fatalf("Forget of a copy released the matrix sent from x")
	}
	jacobian.Forget(m, x)
	if srv.kept.len() != 0 {
		t.Errorf("the server keeps %d matrices after Forget, want none", srv.kept.len())
	}
	b.mu.Lock()
	if len(b.forgot) != 1 || !mat.Equal(b.forgot[0], x) {
		t.Fatalf("the server's model forgot %d matrices, want x alone", len(b.forgot))
	}
	b.forgot = nil
	b.mu.Unlock()

	// A view of a larger matrix (a fold of a reduction's rows) goes with
	// the matrix it lies in.
	big := randDense(rng, 3*minKeptElems/3+3, 3)
	fold := big.Slice(minKeptElems/3+1, 2*minKeptElems/3+2, 0, 3)
	if _, err := m.(framework.Gradienter).Predict(context.Background(), fold); err != nil {
		t.Fatal(err)
	}
	if srv.kept.len() != 1 {
		t.Fatalf("the server keeps %d matrices after the fold's call, want the fold's", srv.kept.len())
	}
	jacobian.Forget(m, big)
	if srv.kept.len() != 0 {
		t.Errorf("the server keeps %d matrices after Forget of the matrix the fold lies in, want none", srv.kept.len())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.forgot) != 1 || !mat.Equal(b.forgot[0], fold) {
		t.Fatalf("the server's model forgot %d matrices, want the fold alone", len(b.forgot))
	}
}
