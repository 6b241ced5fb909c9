package backendplugin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/test/bufconn"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// inProcess serves b over an in-memory gRPC connection with the same server
// and dial options as a real plugin (go-plugin's TestPluginGRPCConn keeps the
// 4 MiB default limit) and returns the client side.
func inProcess(t testing.TB, name string, b framework.Backend, opts ...Option) *remote {
	t.Helper()
	return inProcessServer(t, name, newServer(b), nil, opts...)
}

// inProcessServer is inProcess serving srv (a *server, or a wrapper of one)
// with the extra gRPC server options sopts.
func inProcessServer(t testing.TB, name string, srv pb.BackendServer, sopts []grpc.ServerOption, opts ...Option) *remote {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := newServerWith(srv, sopts)
	go func() { _ = s.Serve(lis) }()
	r, stop, err := connect(context.Background(), name, lis.DialContext, opts...)
	if err != nil {
		s.Stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		s.Stop()
	})
	return r
}

func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	d := make([]float64, r*c)
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	return mat.NewDense(r, c, d)
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func equalApprox(a, b mat.Matrix, tol float64) bool {
	return mat.EqualApprox(a, b, tol)
}

func mustEqual(t *testing.T, what string, got, want mat.Matrix, tol float64) {
	t.Helper()
	gr, gc := got.Dims()
	wr, wc := want.Dims()
	if gr != wr || gc != wc {
		t.Fatalf("%s: want %dx%d, got %dx%d", what, wr, wc, gr, gc)
	}
	if !equalApprox(got, want, tol) {
		t.Fatalf("%s: want %v, got %v", what, mat.Formatted(want), mat.Formatted(got))
	}
}

// fitted returns a fitted linear model on a random problem with exact
// responses y = x.w, and the data.
func fitted(t *testing.T, b framework.Backend, rng *rand.Rand, n, p int) (framework.Model, *mat.Dense, []float64) {
	t.Helper()
	x := randDense(rng, n, p)
	w := randVec(rng, p)
	var y mat.VecDense
	y.MulVec(x, mat.NewVecDense(p, w))
	m, err := b.New(context.Background(), framework.ModelSpec{Task: framework.Regression, Inputs: p, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = framework.Release(m) })
	if err := m.Fit(context.Background(), x, y.RawVector().Data); err != nil {
		t.Fatal(err)
	}
	return m, x, w
}

// checkRoundTrip exercises every RPC against closed forms.
func checkRoundTrip(t *testing.T, b framework.Backend) {
	ctx := context.Background()
	if got, want := b.Capabilities(), (framework.Capabilities{Gradients: true, Kernel: true}); got != want {
		t.Fatalf("Capabilities: want %v, got %v", want, got)
	}
	if opts := b.Options(); len(opts) != 2 || opts[0].Name != "block" || opts[1].Usage != `"predict": Predict panics` {
		t.Fatalf("Options: got %+v", opts)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n, p = 30, 5
	m, x, w := fitted(t, b, rng, n, p)
	g := m.(framework.Gradienter)
	k := m.(framework.Kerneler)
	xCopy := mat.DenseCopyOf(x)

	x2 := randDense(rng, 7, p)
	var want mat.Dense
	want.Mul(x2, mat.NewVecDense(p, w))
	pred, err := m.Predict(ctx, x2)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "Predict", pred, &want, 1e-9)

	if got := g.NumParams(); got != p {
		t.Fatalf("NumParams: want %d, got %d", p, got)
	}
	jac, err := g.Jacobian(ctx, x2)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "Jacobian", jac, x2, 0)

	dtheta := randVec(rng, p)
	ws := make([]float64, p)
	for i := range ws {
		ws[i] = w[i] + dtheta[i]
	}
	want.Reset()
	want.Mul(x2, mat.NewVecDense(p, ws))
	ps, err := g.PredictShifted(ctx, x2, dtheta)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "PredictShifted", ps, &want, 1e-9)

	checkKernelRoundTrip(t, k, x, x2, rng)

	if !mat.Equal(x, xCopy) {
		t.Fatal("input x was modified")
	}
	if err := framework.Release(m); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := framework.Release(m); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	_, err = m.Predict(ctx, x2)
	if err == nil || !strings.Contains(err.Error(), "Predict: no model") {
		t.Fatalf("Predict after Release: want a no-model error, got %v", err)
	}
}

// checkKernelRoundTrip checks the kernel RPCs of k, a linear model fitted
// on x (p columns), on the rows x2 (7 of them): Kernel, KernelInto and
// JacobianTVec against their closed forms.
func checkKernelRoundTrip(t *testing.T, k framework.Kerneler, x, x2 *mat.Dense, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	_, p := x.Dims()
	kk, err := k.Kernel(ctx, x2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Mul(x2, x2.T())
	mustEqual(t, "Kernel(x, nil)", kk, &want, 1e-12)
	// KernelInto: the same bits as Kernel, in the destination's memory
	// when it holds them (here NaNs before the call), in fresh memory when
	// it is too small.
	for _, size := range []int{7*7 - 1, 7 * 7} {
		dst := make([]float64, size)
		for i := range dst {
			dst[i] = math.NaN()
		}
		ki, err := framework.KernelInto(ctx, k, x2, nil, dst)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "KernelInto(x, nil)", ki, kk, 0)
		if in := &ki.RawMatrix().Data[0] == &dst[0]; in != (size == 7*7) {
			t.Fatalf("KernelInto: in a destination of %d values for 49: %v", size, in)
		}
	}
	// A Kernel x2 given as a nil *mat.Dense is nil too.
	kk, err = k.Kernel(ctx, x2, (*mat.Dense)(nil))
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "Kernel(x, (*mat.Dense)(nil))", kk, &want, 1e-12)
	// A non-raw matrix (a transpose view) crosses too.
	kk, err = k.Kernel(ctx, x2, x.T().T())
	if err != nil {
		t.Fatal(err)
	}
	want.Reset()
	want.Mul(x2, x.T())
	mustEqual(t, "Kernel(x2, x)", kk, &want, 1e-12)

	a := randVec(rng, 7)
	v, err := k.JacobianTVec(ctx, x2, a)
	if err != nil {
		t.Fatal(err)
	}
	var wv mat.VecDense
	wv.MulVec(x2.T(), mat.NewVecDense(7, a))
	mustEqual(t, "JacobianTVec", mat.NewVecDense(p, v), &wv, 1e-12)
}

func TestRoundTrip(t *testing.T) {
	b := newLinear()
	checkRoundTrip(t, inProcess(t, "linear", b))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released != 1 {
		t.Fatalf("server released %d models, want 1", b.released)
	}
}

// TestGoPluginGlue goes through go-plugin's own in-process harness: the
// plugin's GRPCServer and GRPCClient hooks and Dispense.
func TestGoPluginGlue(t *testing.T) {
	client, server := plugin.TestPluginGRPCConn(t, false, plugin.PluginSet{pluginName: &backendPlugin{impl: newLinear()}})
	defer client.Close()
	defer server.Stop()
	raw, err := client.Dispense(pluginName)
	if err != nil {
		t.Fatal(err)
	}
	conn, ok := raw.(*grpc.ClientConn)
	if !ok {
		t.Fatalf("Dispense: got %T", raw)
	}
	r, err := newRemote(context.Background(), "linear", conn, &options{hangTimeout: time.Minute}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.c.shutdown()
	checkRoundTrip(t, r)
}

func TestLargeMatrix(t *testing.T) {
	b := inProcess(t, "linear", newLinear())
	checkLarge(t, b)
}

// checkLarge sends a 10000 x 100 matrix both ways (80 MB each), past gRPC's
// default 4 MiB limit.
func checkLarge(t *testing.T, b framework.Backend) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	const n, p = 10000, 100
	m, x, w := fitted(t, b, rng, n, p)
	jac, err := m.(framework.Gradienter).Jacobian(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "Jacobian 10000x100", jac, x, 0)
	pred, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Mul(x, mat.NewVecDense(p, w))
	mustEqual(t, "Predict 10000x100", pred, &want, 1e-8)
}

func TestClientCapabilities(t *testing.T) {
	for i, c := range []struct {
		grad, kernel bool
	}{{false, false}, {true, false}, {true, true}, {false, true}} {
		b := &linear{grad: c.grad, kernel: c.kernel, cancelled: make(chan struct{}, 1)}
		r := inProcess(t, "linear", b)
		m, err := r.New(context.Background(), framework.ModelSpec{Inputs: 3})
		if err != nil {
			t.Fatal(err)
		}
		_, isG := framework.AsGradienter(m)
		_, isK := framework.AsKerneler(m)
		_, isC := m.(interface{ Close() error })
		if isG != c.grad || isK != c.kernel || !isC {
			t.Errorf("Case %d: want Gradienter=%t Kerneler=%t Closer=true, got %t %t %t (%T)",
				i, c.grad, c.kernel, isG, isK, isC, m)
		}
		if err := framework.Release(m); err != nil {
			t.Fatal(err)
		}
	}
}

// lying declares gradients its models do not have.
type lying struct{ *linear }

func (l lying) Capabilities() framework.Capabilities { return framework.Capabilities{Gradients: true} }

func TestCapabilityMismatchRefused(t *testing.T) {
	r := inProcess(t, "liar", lying{&linear{cancelled: make(chan struct{}, 1)}})
	_, err := r.New(context.Background(), framework.ModelSpec{Inputs: 3})
	if err == nil || !strings.Contains(err.Error(), `backend "liar": New: backend declares gradients=true`) {
		t.Fatalf("want a capability mismatch error, got %v", err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	r := inProcess(t, "linear", newLinear())
	_, err := r.New(ctx, framework.ModelSpec{Inputs: 3, Options: map[string]string{"hiden": "50"}})
	if want := `backend "linear": New: unknown option "hiden"`; err == nil || err.Error() != want {
		t.Fatalf("want %q, got %v", want, err)
	}
	if !errors.Is(err, framework.ErrUsage) {
		t.Fatalf("unknown option: want errors.Is(err, ErrUsage), got %#v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Backend != "linear" || e.Op != "New" {
		t.Fatalf("want *Error{linear, New}, got %#v", err)
	}

	rng := rand.New(rand.NewPCG(5, 6))
	m, _, _ := fitted(t, r, rng, 10, 3)
	_, err = m.Predict(ctx, randDense(rng, 2, 4))
	if want := `backend "linear": Predict: x has 4 columns, model has 3 inputs`; err == nil || err.Error() != want || !errors.Is(err, framework.ErrUsage) {
		t.Fatalf("want usage error %q, got %v", want, err)
	}
	// A plain error stays a plain error.
	_, err = m.(framework.Gradienter).PredictShifted(ctx, randDense(rng, 2, 3), []float64{1})
	if want := `backend "linear": PredictShifted: len(dtheta) = 1, want 3`; err == nil || err.Error() != want || errors.Is(err, framework.ErrUsage) {
		t.Fatalf("want plain error %q, got %v", want, err)
	}
	// A panic in the backend becomes an error; the plugin survives.
	pm, err := r.New(ctx, framework.ModelSpec{Inputs: 3, Options: map[string]string{"panic": "predict"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pm.Predict(ctx, randDense(rng, 2, 3))
	if want := `backend "linear": Predict: panic in backend Predict: fake panic`; err == nil || err.Error() != want {
		t.Fatalf("want %q, got %v", want, err)
	}
	if _, err := m.Predict(ctx, randDense(rng, 2, 3)); err != nil {
		t.Fatalf("after a panic: %v", err)
	}
}

// TestCancelReachesServer: cancelling the context of a Fit the server is
// running fails the call with a wrapped context.Canceled and cancels the
// server's Fit too.
func TestCancelReachesServer(t *testing.T) {
	b := newLinear()
	r := inProcess(t, "linear", b)
	m, err := r.New(context.Background(), framework.ModelSpec{Inputs: 2, Options: map[string]string{"block": "fit"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Fit(ctx, mat.NewDense(1, 2, nil), []float64{0}) }()
	select { // the server's Fit is running: cancel it there
	case <-b.blocking:
	case err := <-errc:
		t.Fatalf("Fit returned before it blocked: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin's Fit never started")
	}
	cancel()
	err = <-errc
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), `backend "linear": Fit: `) {
		t.Fatalf("want a wrapped context.Canceled, got %v", err)
	}
	select {
	case <-b.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the plugin's Fit never saw its context cancelled")
	}
}

func TestClosedClient(t *testing.T) {
	r := inProcess(t, "linear", newLinear())
	m, err := r.New(context.Background(), framework.ModelSpec{Inputs: 2})
	if err != nil {
		t.Fatal(err)
	}
	r.c.shutdown()
	_, err = m.Predict(context.Background(), mat.NewDense(1, 2, nil))
	if want := `backend "linear": Predict: plugin client closed`; err == nil || err.Error() != want || !errors.Is(err, ErrClosed) {
		t.Fatalf("want %q, got %v", want, err)
	}
	if err := framework.Release(m); err != nil {
		t.Fatalf("Release after close: want nil, got %v", err)
	}
}

// checkConcurrent runs many goroutines on shared and private models.
func checkConcurrent(t *testing.T, b framework.Backend) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	const p = 6
	shared, _, sw := fitted(t, b, rng, 40, p)
	type job struct {
		m framework.Model
		w []float64
		x *mat.Dense
	}
	var jobs []job
	for i := 0; i < 16; i++ {
		m, w := shared, sw
		if i%2 == 1 {
			m, _, w = fitted(t, b, rng, 40, p)
		}
		jobs = append(jobs, job{m, w, randDense(rng, 50+i, p)})
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(jobs)*20)
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var want mat.Dense
			want.Mul(j.x, mat.NewVecDense(p, j.w))
			var wantK mat.Dense
			wantK.Mul(j.x, j.x.T())
			for r := 0; r < 10; r++ {
				got, err := j.m.Predict(ctx, j.x)
				if err != nil {
					errs <- err
					return
				}
				if !mat.EqualApprox(got, &want, 1e-9) {
					errs <- fmt.Errorf("job %d: wrong prediction", i)
				}
				k, err := j.m.(framework.Kerneler).Kernel(ctx, j.x, nil)
				if err != nil {
					errs <- err
					return
				}
				if !mat.EqualApprox(k, &wantK, 1e-9) {
					errs <- fmt.Errorf("job %d: wrong kernel", i)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestConcurrent(t *testing.T) {
	checkConcurrent(t, inProcess(t, "linear", newLinear()))
}

func TestWireEmptyAndStrided(t *testing.T) {
	big := mat.NewDense(4, 5, nil)
	for i := 0; i < 4; i++ {
		for j := 0; j < 5; j++ {
			big.Set(i, j, float64(10*i+j))
		}
	}
	sub := big.Slice(1, 3, 2, 5) // stride 5, 2 x 3
	got, err := fromPB(toPB(sub))
	if err != nil {
		t.Fatal(err)
	}
	if !mat.Equal(got, sub) {
		t.Fatalf("strided: want %v, got %v", mat.Formatted(sub), mat.Formatted(got))
	}
	empty, err := fromPB(&pb.Matrix{Rows: 0, Cols: 3})
	if err != nil || !empty.IsEmpty() {
		t.Fatalf("empty: got %v, %v", empty, err)
	}
	if _, err := fromPB(&pb.Matrix{Rows: 2, Cols: 3, Data: rawOf([]float64{1})}); err == nil {
		t.Fatal("malformed matrix accepted")
	}
	if _, err := fromPB(&pb.Matrix{Rows: 1, Cols: 1, Data: []byte{1, 2, 3}}); err == nil {
		t.Fatal("values that are not whole float64s accepted")
	}
	if _, err := vecOf(&pb.Vector{Data: []byte{1, 2, 3}}); err == nil {
		t.Fatal("a vector that is not whole float64s accepted")
	}
	// Values at an odd address decode as a copy, the same values.
	buf := make([]byte, 8*3+1)
	copy(buf[1:], rawOf([]float64{1.5, -2, math.Pi}))
	if v, err := vecOf(&pb.Vector{Data: buf[1:]}); err != nil || fmt.Sprint(v) != fmt.Sprint([]float64{1.5, -2, math.Pi}) {
		t.Fatalf("odd-aligned values: %v, %v", v, err)
	}
	negZero := math.Copysign(0, -1)
	if got := decodeLE(encodeLE([]float64{1.5, math.Inf(1), negZero})); fmt.Sprint(got) != fmt.Sprint([]float64{1.5, math.Inf(1), negZero}) || !math.Signbit(got[2]) {
		t.Fatalf("encodeLE/decodeLE: %v", got)
	}
	nan := mat.NewDense(1, 3, []float64{math.NaN(), math.Inf(-1), -0.0})
	got, _ = fromPB(toPB(nan))
	if !math.IsNaN(got.At(0, 0)) || !math.IsInf(got.At(0, 1), -1) {
		t.Fatalf("special values: got %v", got.RawMatrix().Data)
	}
}
