package backendplugin

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

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

// PredictShifts over the transport gives what one call per shift gives in
// process, bit for bit, for shifts in both forms, in one round trip.
func TestPredictShifts(t *testing.T) {
	const p = 100
	ctx := context.Background()
	// inputs fits a model on b and draws the shifts, the same for every
	// backend.
	inputs := func(b framework.Backend) (framework.Model, []framework.Shift) {
		rng := rand.New(rand.NewPCG(3, 4))
		m, _, _ := fitted(t, b, rng, 300, p)
		xT, x, x2 := randDense(rng, 444, p), randDense(rng, 222, p), randDense(rng, 100, p)
		return m, []framework.Shift{
			{X: x, XTrain: xT, A: randVec(rng, 444)},
			{X: x2, DTheta: randVec(rng, p)},
			{X: x, XTrain: xT, A: randVec(rng, 444)},
		}
	}
	m, shifts := inputs(newLinear())
	want, err := jacobian.PredictShiftsEach(ctx, m.(framework.Gradienter), shifts)
	if err != nil {
		t.Fatal(err)
	}
	{
		calls := []string{"PredictShifts"}
		log := &methodLog{}
		r := inProcessServer(t, "linear", newServer(newLinear()), []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
		m, shifts := inputs(r)
		b, ok := framework.As[framework.ShiftBatcher](m)
		if !ok {
			t.Fatal("the remote model is not a ShiftBatcher")
		}
		log.names = nil
		got, err := b.PredictShifts(ctx, shifts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !mat.Equal(got[i], want[i]) {
				t.Errorf("shift %d differs from the in-process one", i)
			}
		}
		names := append([]string(nil), log.names...)
		slices.Sort(names)
		if strings.Join(names, ",") != strings.Join(calls, ",") {
			t.Errorf("calls %v, want %v", names, calls)
		}
	}
}

// Gram over the transport is jacobian.Gram in process (the Jacobian's
// Gram and product), bit for bit, in one round trip.
func TestGram(t *testing.T) {
	const p = 30
	ctx := context.Background()
	inputs := func(b framework.Backend) (framework.Model, *mat.Dense, []float64) {
		rng := rand.New(rand.NewPCG(5, 6))
		m, _, _ := fitted(t, b, rng, 300, p)
		return m, randDense(rng, 500, p), randVec(rng, 500)
	}
	m, x, e := inputs(newLinear())
	wantG, wantB, err := jacobian.Gram(ctx, m.(framework.Gradienter), x, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	{
		calls := []string{"Gram"}
		log := &methodLog{}
		r := inProcessServer(t, "linear", newServer(newLinear()), []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
		m, x, e := inputs(r)
		gr, ok := framework.As[framework.GramBuilder](m)
		if !ok {
			t.Fatal("the remote model is not a GramBuilder")
		}
		log.names = nil
		g, b, err := gr.Gram(ctx, x, e, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(g, wantG) || !mat.Equal(mat.NewVecDense(len(b), b), mat.NewVecDense(len(wantB), wantB)) {
			t.Errorf("remote Gram differs from the in-process one")
		}
		if strings.Join(log.names, ",") != strings.Join(calls, ",") {
			t.Errorf("calls %v, want %v", log.names, calls)
		}
	}
	// The packing of the upper triangle.
	a := mat.NewSymDense(3, []float64{1, 2, 3, 2, 4, 5, 3, 5, 6})
	raw := a.RawSymmetric()
	if got, err := symFromPB(upperPB(raw.Data, raw.Stride, 3)); err != nil || !mat.Equal(got, a) {
		t.Errorf("pack/unpack: %v, %v", got, err)
	}
	if _, err := symFromPB(&pb.Matrix{Rows: 3, Cols: 3, Upper: true, Data: rawOf([]float64{1, 2})}); err == nil {
		t.Error("unpack of 2 values as 3 x 3: no error")
	}
}

// A symmetric kernel travels as its upper triangle when the client allows
// it (half the values) and arrives as the same matrix.
func TestKernelUpper(t *testing.T) {
	ctx := context.Background()
	s := newServer(newLinear())
	rng := rand.New(rand.NewPCG(7, 8))
	ref, err := s.NewModel(ctx, &pb.NewModelRequest{Task: 0, Inputs: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	x, y := randDense(rng, 300, 20), randVec(rng, 300)
	if _, err := s.Fit(ctx, &pb.FitRequest{ModelId: ref.ModelId, X: toPB(x), Y: vec(y)}); err != nil {
		t.Fatal(err)
	}
	xs := randDense(rng, 50, 20)
	full, err := s.Kernel(ctx, &pb.KernelRequest{ModelId: ref.ModelId, X1: toPB(xs)})
	if err != nil {
		t.Fatal(err)
	}
	up, err := s.Kernel(ctx, &pb.KernelRequest{ModelId: ref.ModelId, X1: toPB(xs), AllowUpper: true})
	if err != nil {
		t.Fatal(err)
	}
	if full.Upper || len(full.Data) != 8*50*50 || !up.Upper || len(up.Data) != 8*50*51/2 {
		t.Fatalf("full: upper %v, %d values; allowed: upper %v, %d values", full.Upper, len(full.Data), up.Upper, len(up.Data))
	}
	a, err := fromPB(full)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fromPB(up)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(a, b) {
		t.Error("the upper triangle unpacks to another matrix")
	}
	// A kernel symmetric only up to rounding travels whole.
	asym := mat.NewDense(2, 2, []float64{1, 2, 2.0000000000000004, 3})
	if exactlySymmetric(asym) || !exactlySymmetric(mat.NewDense(2, 2, []float64{1, 2, 2, 3})) {
		t.Error("exactlySymmetric")
	}
	// A cross kernel is never packed.
	cross, err := s.Kernel(ctx, &pb.KernelRequest{ModelId: ref.ModelId, X1: toPB(xs), X2: toPB(xs), AllowUpper: true})
	if err != nil || cross.Upper {
		t.Errorf("cross kernel: upper %v, %v", cross.GetUpper(), err)
	}
	if _, err := fromPB(&pb.Matrix{Rows: 3, Cols: 2, Data: make([]byte, 48), Upper: true}); err == nil {
		t.Error("a 3 x 2 upper triangle: no error")
	}
}

// TestSymmetricTiles: exactlySymmetric and fullFromUpper, which visit a
// matrix in tiles, agree with the definitions element by element, at
// sizes around the tile's and with the asymmetry anywhere.
func TestSymmetricTiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	for _, n := range []int{1, 2, symTile - 1, symTile, symTile + 1, 2*symTile + 3} {
		a := randDense(rng, n, n+5).Slice(0, n, 0, n).(*mat.Dense) // strided
		for i := 0; i < n; i++ {
			for j := 0; j < i; j++ {
				a.Set(i, j, a.At(j, i))
			}
		}
		if !exactlySymmetric(a) {
			t.Fatalf("n %d: a symmetric matrix is not", n)
		}
		raw := a.RawMatrix()
		full, err := fromPB(upperPB(raw.Data, raw.Stride, n))
		if err != nil || !mat.Equal(full, a) {
			t.Fatalf("n %d: the upper triangle unpacks to another matrix (%v)", n, err)
		}
		// One value off, below or above the diagonal, in the first, a
		// middle and the last tile.
		for _, at := range [][2]int{{n - 1, 0}, {0, n - 1}, {n / 2, n/2 + 1}, {n - 1, n - 2}} {
			i, j := at[0], at[1]
			if i == j || min(i, j) < 0 || max(i, j) >= n {
				continue
			}
			b := mat.DenseCopyOf(a)
			b.Set(i, j, math.Nextafter(b.At(i, j), 0))
			if exactlySymmetric(b) {
				t.Errorf("n %d: value %d,%d changed, still symmetric", n, i, j)
			}
			b.Set(i, j, math.NaN())
			b.Set(j, i, math.NaN())
			if exactlySymmetric(b) {
				t.Errorf("n %d: NaN at %d,%d and %d,%d, symmetric", n, i, j, j, i)
			}
		}
	}
	if _, err := fromPB(&pb.Matrix{Rows: 3, Cols: 3, Upper: true, Data: rawOf([]float64{1, 2})}); err == nil {
		t.Error("3 x 3 from 2 values: no error")
	}
}
