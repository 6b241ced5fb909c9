package backendplugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// sentMatrix is one request matrix as the server received it.
type sentMatrix struct {
	method string
	handle bool
	data   int // values carried
}

// wireLog is a gRPC interceptor recording the request matrices and the
// released handles.
type wireLog struct {
	mu       sync.Mutex
	sent     []sentMatrix
	released int
}

func (l *wireLog) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	var ms []*pb.Matrix
	switch r := req.(type) {
	case *pb.FitRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.PredictRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.JacobianRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.PredictShiftsRequest:
		for _, s := range r.Shifts {
			ms = append(ms, s.X, s.XTrain)
		}
	case *pb.KernelRequest:
		ms = []*pb.Matrix{r.X1, r.X2}
	case *pb.JacobianTVecRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.WarmStartRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.ReleaseRequest:
		l.mu.Lock()
		l.released += len(r.MatrixHandles)
		l.mu.Unlock()
	}
	l.mu.Lock()
	for _, m := range ms {
		if m != nil {
			l.sent = append(l.sent, sentMatrix{info.FullMethod[len("/"+pb.Backend_ServiceDesc.ServiceName+"/"):], m.Handle != 0, len(m.Data) / 8})
		}
	}
	l.mu.Unlock()
	return h(ctx, req)
}

// take returns the matrices received since the last take.
func (l *wireLog) take() []sentMatrix {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sent
	l.sent = nil
	return s
}

// loggedPipe serves the linear fake, logging the request matrices; the
// client keeps handles for budget bytes of matrices (0: the default).
func loggedPipe(t *testing.T, budget int64) (*remote, *server, *wireLog) {
	t.Helper()
	s := newServer(newLinear())
	log := &wireLog{}
	r := inProcessServer(t, "linear", s, []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
	if budget > 0 {
		r.c.handles = newHandleTable(budget)
	}
	return r, s, log
}

// callAll makes every call that takes a matrix argument on m with the
// matrices xs (each >= 4096 values, p columns) and returns their answers
// in order.
func callAll(t *testing.T, m framework.Model, rng *rand.Rand, p int, xs ...*mat.Dense) []*mat.Dense {
	t.Helper()
	ctx := context.Background()
	g := m.(framework.Gradienter)
	k := m.(framework.Kerneler)
	var out []*mat.Dense
	add := func(d *mat.Dense, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	for i, x := range xs {
		add(m.Predict(ctx, x))
		add(g.Jacobian(ctx, x))
		add(g.PredictShifted(ctx, x, randVec(rng, p)))
		add(k.Kernel(ctx, x, nil))
		add(k.Kernel(ctx, x, xs[(i+1)%len(xs)]))
		n, _ := x.Dims()
		v, err := k.JacobianTVec(ctx, x, randVec(rng, n))
		add(mat.NewDense(1, p, v), err)
	}
	return out
}

// TestMatrixHandlesBitIdentical: the answers through the plugin, with
// matrices kept by handle and a budget that keeps dropping them, are the
// same bits as in process.
func TestMatrixHandlesBitIdentical(t *testing.T) {
	const p = 100
	kept, _, _ := loggedPipe(t, 0)
	tight, _, tightLog := loggedPipe(t, 8*222*p+1)
	backends := []framework.Backend{newLinear(), kept, tight}
	var answers [3][]*mat.Dense
	for bi, b := range backends {
		rng := rand.New(rand.NewPCG(11, 12))
		m, _, _ := fitted(t, b, rng, 300, p)
		xHeld, xT := randDense(rng, 222, p), randDense(rng, 444, p)
		strided := randDense(rng, 300, p+7).Slice(10, 232, 3, 3+p).(*mat.Dense)
		for range 3 {
			answers[bi] = append(answers[bi], callAll(t, m, rng, p, xHeld, xT, strided)...)
		}
	}
	for bi := 1; bi < 3; bi++ {
		if len(answers[bi]) != len(answers[0]) {
			t.Fatalf("backend %d: %d answers, want %d", bi, len(answers[bi]), len(answers[0]))
		}
		for i := range answers[0] {
			if !mat.Equal(answers[bi][i], answers[0][i]) {
				t.Fatalf("answer %d: backend %d differs from the in-process one", i, bi)
			}
		}
	}
	if tightLog.released == 0 {
		t.Fatal("the tight budget released no handle")
	}
}

// TestMatrixHandlesSendDataOnce: the second call with the same matrix sends
// its handle alone, in any RPC; small matrices go in full without a
// handle; a matrix changed in place is sent again under a new handle.
func TestMatrixHandlesSendDataOnce(t *testing.T) {
	ctx := context.Background()
	const p = 100
	r, s, log := loggedPipe(t, 0)
	rng := rand.New(rand.NewPCG(13, 14))
	m, _, w := fitted(t, r, rng, 300, p)
	g := m.(framework.Gradienter)
	x := randDense(rng, 222, p)
	log.take()

	check := func(what string, want ...sentMatrix) {
		t.Helper()
		got := log.take()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: the server received %v, want %v", what, got, want)
		}
	}
	wantPred := func(x mat.Matrix) *mat.Dense {
		var d mat.Dense
		d.Mul(x, mat.NewVecDense(p, w))
		return &d
	}
	for i, wantData := range []int{222 * p, 0} {
		pred, err := m.Predict(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, fmt.Sprint("Predict ", i), pred, wantPred(x), 1e-9)
		check(fmt.Sprint("Predict ", i), sentMatrix{"Predict", true, wantData})
	}
	if _, err := g.PredictShifted(ctx, x, randVec(rng, p)); err != nil {
		t.Fatal(err)
	}
	check("PredictShifted", sentMatrix{"PredictShifts", true, 0})
	if n := s.kept.len(); n != 1 {
		t.Fatalf("the server keeps %d matrices, want 1", n)
	}

	small := randDense(rng, 40, p) // 4000 values: below minKeptElems
	for range 2 {
		if _, err := m.Predict(ctx, small); err != nil {
			t.Fatal(err)
		}
		check("small Predict", sentMatrix{"Predict", false, 40 * p})
	}

	x.Set(5, 7, x.At(5, 7)+1) // the same *mat.Dense, other content
	pred, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "Predict after a change", pred, wantPred(x), 1e-9)
	check("Predict after a change", sentMatrix{"Predict", true, 222 * p})

	// Fit's matrix never goes by handle.
	if err := m.Fit(ctx, x, make([]float64, 222)); err != nil {
		t.Fatal(err)
	}
	check("Fit", sentMatrix{"Fit", false, 222 * p})
}

// TestMatrixHandlesReleased: with a budget of one matrix (whose quarter
// one dropped matrix exceeds), the client releases the handle it drops at
// once and the server keeps one matrix.
func TestMatrixHandlesReleased(t *testing.T) {
	ctx := context.Background()
	const p = 100
	r, s, log := loggedPipe(t, 8*222*p+1)
	rng := rand.New(rand.NewPCG(15, 16))
	m, _, _ := fitted(t, r, rng, 300, p)
	xa, xb := randDense(rng, 222, p), randDense(rng, 222, p)
	log.take()
	for i, x := range []*mat.Dense{xa, xb, xa} {
		if _, err := m.Predict(ctx, x); err != nil {
			t.Fatal(err)
		}
		if n := s.kept.len(); n != 1 {
			t.Fatalf("call %d: the server keeps %d matrices, want 1", i, n)
		}
		if log.released != i {
			t.Fatalf("call %d: %d handles released, want %d", i, log.released, i)
		}
	}
	// xa was dropped: sent again in full.
	if got := log.take(); len(got) != 3 || got[2].data != 222*p {
		t.Fatalf("the server received %v, want xa's data again last", got)
	}
}

// TestMatrixHandlesProtocol drives the server through raw requests: a
// reference to a handle never sent, or released, and one with other
// dimensions than the kept matrix are usage errors.
func TestMatrixHandlesProtocol(t *testing.T) {
	ctx := context.Background()
	const p = 100
	r, _, _ := loggedPipe(t, 0)
	rng := rand.New(rand.NewPCG(17, 18))
	m, _, _ := fitted(t, r, rng, 300, p)
	id := m.(*model).id
	x := randDense(rng, 50, p)
	const h = 1 << 40

	ref := &pb.Matrix{Rows: 50, Cols: p, Handle: h}
	if _, err := r.c.rpc.Predict(ctx, &pb.PredictRequest{ModelId: id, X: ref}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("unknown handle: want InvalidArgument, got %v", err)
	}
	full := toPB(x)
	full.Handle = h
	want, err := r.c.rpc.Predict(ctx, &pb.PredictRequest{ModelId: id, X: full})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.c.rpc.Predict(ctx, &pb.PredictRequest{ModelId: id, X: ref})
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != string(want.Data) {
		t.Fatal("the reference answered otherwise than the data")
	}
	_, err = r.c.rpc.Predict(ctx, &pb.PredictRequest{ModelId: id, X: &pb.Matrix{Rows: p, Cols: 50, Handle: h}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("wrong dimensions: want InvalidArgument, got %v", err)
	}
	if _, err := r.c.rpc.Release(ctx, &pb.ReleaseRequest{MatrixHandles: []uint64{h}}); err != nil {
		t.Fatal(err)
	}
	_, err = r.c.rpc.Predict(ctx, &pb.PredictRequest{ModelId: id, X: ref})
	if e := r.c.translate(ctx, err); !errors.Is(e, framework.ErrUsage) {
		t.Fatalf("released handle: want a usage error, got %v", e)
	}
}

// TestMatrixHandlesConcurrent runs goroutines sending the same and
// different large matrices to shared and private models, with a budget
// that drops handles while other calls use them.
func TestMatrixHandlesConcurrent(t *testing.T) {
	ctx := context.Background()
	const p = 64
	for _, budget := range []int64{0, 3 * 8 * 100 * p} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r, _, log := loggedPipe(t, budget)
			rng := rand.New(rand.NewPCG(21, 22))
			shared, _, sw := fitted(t, r, rng, 200, p)
			xs := []*mat.Dense{randDense(rng, 100, p), randDense(rng, 120, p), randDense(rng, 140, p), randDense(rng, 160, p)}
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for i := 0; i < 8; i++ {
				m, w := shared, sw
				if i%2 == 1 {
					m, _, w = fitted(t, r, rng, 200, p)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := 0; j < 12; j++ {
						x := xs[(i+j)%len(xs)]
						var want mat.Dense
						want.Mul(x, mat.NewVecDense(p, w))
						got, err := m.Predict(ctx, x)
						if err != nil {
							errs <- err
							return
						}
						if !mat.EqualApprox(got, &want, 1e-9) {
							errs <- fmt.Errorf("goroutine %d: wrong prediction", i)
						}
						var wantK mat.Dense
						wantK.Mul(x, xs[0].T())
						k, err := m.(framework.Kerneler).Kernel(ctx, x, xs[0])
						if err != nil {
							errs <- err
							return
						}
						if !mat.EqualApprox(k, &wantK, 1e-9) {
							errs <- fmt.Errorf("goroutine %d: wrong kernel", i)
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			refs := 0
			for _, s := range log.take() {
				if s.handle && s.data == 0 {
					refs++
				}
			}
			if refs == 0 {
				t.Error("no references sent")
			}
		})
	}
}

// TestHandleTable: least recently used out past the budget; a dropped
// handle in use is released when its last call is done; a matrix alone
// past the budget gets no handle; releases wait until their matrices hold
// a quarter of the budget.
func TestHandleTable(t *testing.T) {
	quarter := newHandleTable(40)
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		quarter.unpin(quarter.pin(k, 9), true)
	}
	// 45 bytes in 40: a dropped, 9 bytes pending, below 40/4.
	if got := quarter.takeReleased(); len(got) != 0 {
		t.Fatalf("released %v before a quarter of the budget", got)
	}
	quarter.unpin(quarter.pin("f", 9), true) // b dropped too: 18 pending
	if got := quarter.takeReleased(); len(got) != 2 {
		t.Fatalf("released %v, want the two dropped handles", got)
	}
	tb := newHandleTable(10)
	a := tb.pin("a", 4)
	tb.unpin(a, true)
	b := tb.pin("b", 4)
	if tb.pin("a", 4) != a { // a is the most recent now, pinned twice
		t.Fatal("a's handle changed")
	}
	tb.unpin(b, true)
	c := tb.pin("c", 4) // 12 > 10: drops b, which no call uses
	if got := tb.takeReleased(); fmt.Sprint(got) != fmt.Sprint([]uint64{b.id}) {
		t.Fatalf("released %v, want b's %d", got, b.id)
	}
	d := tb.pin("d", 4) // drops a, still in use
	if got := tb.takeReleased(); len(got) != 0 {
		t.Fatalf("released %v while in use", got)
	}
	tb.unpin(a, true)
	if got := tb.takeReleased(); fmt.Sprint(got) != fmt.Sprint([]uint64{a.id}) {
		t.Fatalf("released %v, want a's %d once unpinned", got, a.id)
	}
	if tb.pin("big", 11) != nil {
		t.Fatal("a matrix past the budget got a handle")
	}
	if tb.isStored(c) {
		t.Fatal("c stored before its call succeeded")
	}
	tb.unpin(c, false)
	tb.unpin(d, true)
	if tb.isStored(c) || !tb.isStored(d) {
		t.Fatal("stored after a failed call, or not after a successful one")
	}
	if a.id == b.id || b.id == c.id || c.id == d.id {
		t.Fatal("handles reused")
	}
}

// TestHandleTableAge: making a handle drops those not pinned for more than
// maxHandleAge pins, within the budget; one pinned within them stays.
func TestHandleTableAge(t *testing.T) {
	tb := newHandleTable(1 << 20)
	old := tb.pin("old", 4)
	tb.unpin(old, true)
	recent := tb.pin("recent", 4)
	tb.unpin(recent, true)
	busy := tb.pin("busy", 4)
	for range maxHandleAge {
		tb.unpin(tb.pin("busy", 4), true)
	}
	tb.unpin(tb.pin("recent", 4), true)
	tb.unpin(busy, true)
	if got := tb.pin("new", 4); got == nil {
		t.Fatal("no handle for a matrix within the budget")
	}
	for key, kept := range map[string]bool{"old": false, "recent": true, "busy": true, "new": true} {
		if _, ok := tb.byKey[key]; ok != kept {
			t.Errorf("handle %q kept: %v, want %v", key, ok, kept)
		}
	}
	if !old.gone {
		t.Error("the old handle is not marked gone")
	}
}

func TestMatrixKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	x := randDense(rng, 64, 64)
	k := matrixKey(toPB(x))
	if len(k) != keyHeader+16 || k != matrixKey(toPB(mat.DenseCopyOf(x))) {
		t.Fatal("equal contents, different keys")
	}
	// Same values, other shape.
	if k == matrixKey(&pb.Matrix{Rows: 32, Cols: 128, Data: rawOf(x.RawMatrix().Data)}) {
		t.Fatal("the key ignores the shape")
	}
	// Same values and shape, other layout.
	l := toPB(x)
	l.Layout = &pb.RowLayout{Phase: 3}
	if k == matrixKey(l) {
		t.Fatal("the key ignores the layout")
	}
	// A change of one bit anywhere, of the first, a middle and the last
	// value.
	for _, at := range [][2]int{{0, 0}, {31, 17}, {63, 63}} {
		y := mat.DenseCopyOf(x)
		y.Set(at[0], at[1], math.Nextafter(y.At(at[0], at[1]), math.Inf(1)))
		if k == matrixKey(toPB(y)) {
			t.Fatalf("the key ignores a change in value %v", at)
		}
	}
	// The two hashes are not one: under other seeds, other bits.
	if k[keyHeader:keyHeader+8] == k[keyHeader+8:] {
		t.Fatal("the two hashes agree")
	}
}

// BenchmarkMatrixKey: the key of lazy's training rows at scale, computed
// for every Krylov product on them.
func BenchmarkMatrixKey(b *testing.B) {
	x := toPB(randDense(rand.New(rand.NewPCG(25, 26)), lbRows, lbInputs))
	b.SetBytes(int64(len(x.Data)))
	for b.Loop() {
		_ = matrixKey(x)
	}
}
