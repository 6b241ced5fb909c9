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
	"github.com/lazyvi/lazyvi/internal/pb"
)

// sentMatrix is one request matrix as the server received it.
type sentMatrix struct {
	method string
	key    bool
	data   int // values carried
}

// wireLog is a gRPC interceptor recording the request matrices.
type wireLog struct {
	mu   sync.Mutex
	sent []sentMatrix
}

func (l *wireLog) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	var ms []*pb.Matrix
	switch r := req.(type) {
	case *pb.FitRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.MatrixRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.PredictShiftedRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.KernelRequest:
		ms = []*pb.Matrix{r.X1, r.X2}
	case *pb.JacobianTVecRequest:
		ms = []*pb.Matrix{r.X}
	case *pb.WarmStartRequest:
		ms = []*pb.Matrix{r.X}
	}
	l.mu.Lock()
	for _, m := range ms {
		if m != nil {
			// The values as they arrived: packed, or raw (raw.go).
			l.sent = append(l.sent, sentMatrix{info.FullMethod[len("/lazyvi.backend.v1.Backend/"):], len(m.Key) > 0, len(m.Data) + len(m.DataRaw)/8})
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

// noCacheServer is a server as it was before the matrix cache: it does not
// advertise one.
type noCacheServer struct{ *server }

func (s noCacheServer) Capabilities(ctx context.Context, e *pb.Empty) (*pb.CapabilitiesResponse, error) {
	resp, err := s.server.Capabilities(ctx, e)
	if resp != nil {
		resp.MatrixCache = false
	}
	return resp, err
}

// cachedPipe serves the linear fake with the matrix cache (budget bytes; 0:
// the default), logging the request matrices; without the capability when
// advertise is false.
func cachedPipe(t *testing.T, budget int64, advertise bool) (*remote, *server, *wireLog) {
	t.Helper()
	s := newServer(newLinear())
	if budget > 0 {
		s.cache.setBudget(budget)
	}
	var srv pb.BackendServer = s
	if !advertise {
		srv = noCacheServer{s}
	}
	log := &wireLog{}
	r := inProcessServer(t, "linear", srv, []grpc.ServerOption{grpc.UnaryInterceptor(log.intercept)})
	return r, s, log
}

// callAll makes every cached call on m with the matrices xs (each >= 4096
// values, p columns) and returns their answers in order.
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

// TestMatrixCacheBitIdentical: the answers are the same bits with the
// cache, without it (a server that does not advertise it) and in process.
func TestMatrixCacheBitIdentical(t *testing.T) {
	const p = 100
	cached, cs, _ := cachedPipe(t, 0, true)
	plain, ps, _ := cachedPipe(t, 0, false)
	if cached.c.known == nil || plain.c.known != nil {
		t.Fatalf("client key sets: cached %v, plain %v", cached.c.known != nil, plain.c.known != nil)
	}
	backends := []framework.Backend{cached, plain, newLinear()}
	var answers [3][]*mat.Dense
	for bi, b := range backends {
		rng := rand.New(rand.NewPCG(11, 12))
		m, _, _ := fitted(t, b, rng, 300, p)
		xHeld, xT := randDense(rng, 222, p), randDense(rng, 444, p)
		strided := randDense(rng, 300, p+7).Slice(10, 232, 3, 3+p).(*mat.Dense)
		for round := 0; round < 3; round++ {
			answers[bi] = append(answers[bi], callAll(t, m, rng, p, xHeld, xT, strided)...)
		}
	}
	for bi := 1; bi < 3; bi++ {
		if len(answers[bi]) != len(answers[0]) {
			t.Fatalf("backend %d: %d answers, want %d", bi, len(answers[bi]), len(answers[0]))
		}
		for i := range answers[0] {
			if !mat.Equal(answers[bi][i], answers[0][i]) {
				t.Fatalf("answer %d: backend %d differs from the cached plugin", i, bi)
			}
		}
	}
	if cs.cache.hits.Load() == 0 || cs.cache.misses.Load() != 0 {
		t.Fatalf("cached server: %d hits, %d misses; want hits and no misses", cs.cache.hits.Load(), cs.cache.misses.Load())
	}
	if n := ps.cache.stores.Load() + ps.cache.hits.Load(); n != 0 {
		t.Fatalf("server without the capability: %d stores and hits, want 0", n)
	}
}

// TestMatrixCacheSendsDataOnce: the second call with the same matrix sends
// its key alone, in any RPC; small matrices go in full without a key; a
// matrix changed in place is sent again.
func TestMatrixCacheSendsDataOnce(t *testing.T) {
	ctx := context.Background()
	const p = 100
	r, s, log := cachedPipe(t, 0, true)
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
	pred, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "first Predict", pred, wantPred(x), 1e-9)
	check("first Predict", sentMatrix{"Predict", true, 222 * p})
	pred, err = m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "second Predict", pred, wantPred(x), 1e-9)
	check("second Predict", sentMatrix{"Predict", true, 0})
	if _, err := g.PredictShifted(ctx, x, randVec(rng, p)); err != nil {
		t.Fatal(err)
	}
	check("PredictShifted", sentMatrix{"PredictShifted", true, 0})
	if got := [3]int64{s.cache.stores.Load(), s.cache.hits.Load(), s.cache.misses.Load()}; got != [3]int64{1, 2, 0} {
		t.Fatalf("stores, hits, misses: got %v, want [1 2 0]", got)
	}

	small := randDense(rng, 40, p) // 4000 values: below minCachedElems
	for range 2 {
		if _, err := m.Predict(ctx, small); err != nil {
			t.Fatal(err)
		}
		check("small Predict", sentMatrix{"Predict", false, 40 * p})
	}

	x.Set(5, 7, x.At(5, 7)+1) // the same *mat.Dense, other content
	pred, err = m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "Predict after a change", pred, wantPred(x), 1e-9)
	check("Predict after a change", sentMatrix{"Predict", true, 222 * p})

	// Fit's matrix is never keyed.
	if err := m.Fit(ctx, x, make([]float64, 222)); err != nil {
		t.Fatal(err)
	}
	check("Fit", sentMatrix{"Fit", false, 222 * p})
}

// TestMatrixCacheEviction: with budgets too small for the working set (one
// matrix, or none), the calls still answer right, through the cache-miss
// retry.
func TestMatrixCacheEviction(t *testing.T) {
	const p = 100
	for _, budget := range []int64{8*222*p + 1000, 1} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r, s, log := cachedPipe(t, budget, true)
			want := newLinear()
			var answers [2][]*mat.Dense
			for bi, b := range []framework.Backend{r, want} {
				rng := rand.New(rand.NewPCG(15, 16))
				m, _, _ := fitted(t, b, rng, 300, p)
				xa, xb := randDense(rng, 222, p), randDense(rng, 222, p)
				for range 3 {
					answers[bi] = append(answers[bi], callAll(t, m, rng, p, xa, xb)...)
				}
			}
			for i := range answers[0] {
				if !mat.Equal(answers[0][i], answers[1][i]) {
					t.Fatalf("answer %d differs from the in-process one", i)
				}
			}
			if s.cache.misses.Load() == 0 {
				t.Fatal("no cache misses: the budget did not evict")
			}
			refs, full := 0, 0
			for _, m := range log.take() {
				if m.key && m.data == 0 {
					refs++
				} else if m.key {
					full++
				}
			}
			// A Kernel whose x1 misses does not look x2 up: at most as many.
			if int64(refs) < s.cache.hits.Load()+s.cache.misses.Load() {
				t.Fatalf("%d references sent, server counted %d hits + %d misses", refs, s.cache.hits.Load(), s.cache.misses.Load())
			}
			t.Logf("references %d (hits %d, misses %d), keyed full sends %d", refs, s.cache.hits.Load(), s.cache.misses.Load(), full)
		})
	}
}

// TestMatrixCacheProtocol drives the server's cache through raw requests:
// a reference to an unknown key is the cache-miss error, one with other
// dimensions than the stored matrix is a usage error.
func TestMatrixCacheProtocol(t *testing.T) {
	ctx := context.Background()
	const p = 100
	r, _, _ := cachedPipe(t, 0, true)
	rng := rand.New(rand.NewPCG(17, 18))
	m, _, _ := fitted(t, r, rng, 300, p)
	id := m.(*model).id
	x := randDense(rng, 50, p)
	key := []byte("0123456789abcdef")

	_, err := r.c.rpc.Predict(ctx, &pb.MatrixRequest{ModelId: id, X: &pb.Matrix{Rows: 50, Cols: p, Key: key}})
	if !isCacheMiss(err) {
		t.Fatalf("unknown key: want the cache-miss error, got %v", err)
	}
	full := toPB(x)
	full.Key = key
	want, err := r.c.rpc.Predict(ctx, &pb.MatrixRequest{ModelId: id, X: full})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.c.rpc.Predict(ctx, &pb.MatrixRequest{ModelId: id, X: &pb.Matrix{Rows: 50, Cols: p, Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Data) != fmt.Sprint(want.Data) {
		t.Fatal("the reference answered otherwise than the data")
	}
	_, err = r.c.rpc.Predict(ctx, &pb.MatrixRequest{ModelId: id, X: &pb.Matrix{Rows: p, Cols: 50, Key: key}})
	if status.Code(err) != codes.InvalidArgument || isCacheMiss(err) {
		t.Fatalf("wrong dimensions: want InvalidArgument, got %v", err)
	}
	// The miss error reaches a caller only through a broken client; it is
	// then a plain error, not a usage error.
	if e := r.c.translate(ctx, errCacheMiss); errors.Is(e, framework.ErrUsage) {
		t.Fatalf("cache miss translated to a usage error: %v", e)
	}
}

// TestMatrixCacheOldServer: a server that does not advertise the cache gets
// every matrix in full and no key.
func TestMatrixCacheOldServer(t *testing.T) {
	const p = 100
	r, _, log := cachedPipe(t, 0, false)
	rng := rand.New(rand.NewPCG(19, 20))
	m, _, _ := fitted(t, r, rng, 300, p)
	xs := []*mat.Dense{randDense(rng, 222, p), randDense(rng, 444, p)}
	callAll(t, m, rng, p, xs...)
	callAll(t, m, rng, p, xs...)
	sent := log.take()
	if len(sent) == 0 {
		t.Fatal("no matrices logged")
	}
	for _, s := range sent {
		if s.key || s.data < 222*p {
			t.Fatalf("server without the cache received %+v", s)
		}
	}
}

// TestMatrixCacheConcurrent runs goroutines sending the same and different
// large matrices to shared and private models, with a budget that evicts.
func TestMatrixCacheConcurrent(t *testing.T) {
	ctx := context.Background()
	const p = 64
	for _, budget := range []int64{0, 3 * 8 * 100 * p} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			r, s, _ := cachedPipe(t, budget, true)
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
			t.Logf("stores %d, hits %d, misses %d", s.cache.stores.Load(), s.cache.hits.Load(), s.cache.misses.Load())
			if s.cache.hits.Load() == 0 {
				t.Error("no cache hits")
			}
		})
	}
}

func TestLRU(t *testing.T) {
	c := newLRU[int](10, 3)
	c.add("a", 1, 4)
	c.add("b", 2, 4)
	if _, ok := c.get("a"); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	c.add("c", 3, 4) // 12 > 10: evicts b
	if _, ok := c.get("b"); ok {
		t.Fatal("b not evicted")
	}
	if v, ok := c.get("a"); !ok || v != 1 {
		t.Fatal("a evicted")
	}
	if c.add("big", 4, 11) {
		t.Fatal("an entry past the budget was stored")
	}
	c.add("d", 5, 1)
	c.add("e", 6, 1) // 4 entries > 3: evicts the least recent, c
	if _, ok := c.get("c"); ok || c.order.Len() != 3 || c.used != 6 {
		t.Fatalf("after the count bound: len %d, used %d", c.order.Len(), c.used)
	}
	c.remove("a")
	if _, ok := c.get("a"); ok || c.used != 2 {
		t.Fatalf("remove: used %d", c.used)
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
	if k == matrixKey(&pb.Matrix{Rows: 32, Cols: 128, Data: x.RawMatrix().Data}) {
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
	b.SetBytes(8 * int64(len(x.Data)))
	for b.Loop() {
		_ = matrixKey(x)
	}
}
