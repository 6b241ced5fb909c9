package backendplugin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// serveEnv, set in a re-executed test binary's environment, makes TestMain
// serve a fake backend instead of running the tests.
const serveEnv = "LAZYVI_BACKENDPLUGIN_TEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "":
		os.Exit(m.Run())
	case "linear":
		Serve(newLinear())
	case "v3":
		serve(newLinear(), 3)
	case "bench":
		Serve(benchBackend{})
	case "lazybench":
		Serve(lazyBenchBackend{})
	case "killed": // killed before the handshake
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "silent": // never handshakes
		time.Sleep(time.Hour)
	case "chatty":
		os.Stdout.WriteString("hello from a program that is not a plugin\n")
		Serve(newLinear())
	}
	os.Exit(0)
}

// pluginCmd re-executes the test binary as a plugin serving kind.
func pluginCmd(kind string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+kind)
	return cmd
}

// markerWriter collects the plugin's stderr and signals when blockMarker
// shows up.
type markerWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen chan struct{}
	once sync.Once
}

func newMarkerWriter() *markerWriter { return &markerWriter{seen: make(chan struct{})} }

func (w *markerWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), blockMarker) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *markerWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func openPlugin(t testing.TB, kind string, opts ...Option) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Open(ctx, "linear", pluginCmd(kind), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	c := openPlugin(t, "linear")
	b := c.Backend()
	t.Run("RoundTrip", func(t *testing.T) { checkRoundTrip(t, b) })
	t.Run("Large", func(t *testing.T) { checkLarge(t, b) })
	t.Run("Concurrent", func(t *testing.T) { checkConcurrent(t, b) })
	t.Run("Usage", func(t *testing.T) {
		_, err := b.New(context.Background(), framework.ModelSpec{Inputs: 3, Options: map[string]string{"hiden": "50"}})
		if want := `backend "linear": New: unknown option "hiden"`; err == nil || err.Error() != want || !errors.Is(err, framework.ErrUsage) {
			t.Fatalf("want usage error %q, got %v", want, err)
		}
	})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !c.pc.Exited() {
		t.Fatal("plugin process still running after Close")
	}
	_, err := b.New(context.Background(), framework.ModelSpec{Inputs: 3})
	if want := `backend "linear": New: plugin client closed`; err == nil || err.Error() != want {
		t.Fatalf("after Close: want %q, got %v", want, err)
	}
}

// startBlockingFit opens a plugin, starts a Fit that blocks in the plugin
// and returns once the plugin is inside it.
func startBlockingFit(t *testing.T, opts ...Option) (*Client, <-chan error) {
	t.Helper()
	w := newMarkerWriter()
	c := openPlugin(t, "linear", append(opts, WithStderr(w))...)
	m, err := c.Backend().New(context.Background(), framework.ModelSpec{Inputs: 2, Options: map[string]string{"block": "fit"}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- m.Fit(context.Background(), mat.NewDense(1, 2, nil), []float64{0}) }()
	select {
	case <-w.seen:
	case <-time.After(time.Minute):
		t.Fatalf("the plugin never entered Fit; its stderr: %s", w.String())
	}
	return c, errc
}

func TestSubprocessKilledMidCall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	c, errc := startBlockingFit(t)
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-errc:
	case <-time.After(time.Minute):
		t.Fatal("Fit did not return after the plugin was killed")
	}
	if want := `backend "linear": Fit: plugin process exited: signal: killed`; err == nil || err.Error() != want || !errors.Is(err, ErrExited) {
		t.Fatalf("want %q, got %v", want, err)
	}
	// Later calls fail at once the same way.
	_, err = c.Backend().New(context.Background(), framework.ModelSpec{Inputs: 2})
	if want := `backend "linear": New: plugin process exited: signal: killed`; err == nil || err.Error() != want {
		t.Fatalf("after the exit: want %q, got %v", want, err)
	}
}

func TestSubprocessStoppedMidCall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	const timeout = 500 * time.Millisecond
	c, errc := startBlockingFit(t, WithHangTimeout(timeout))
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var err error
	select {
	case err = <-errc:
	case <-time.After(time.Minute):
		_ = c.cmd.Process.Kill()
		t.Fatal("Fit still waiting a minute after the plugin was stopped")
	}
	elapsed := time.Since(start)
	if want := `backend "linear": Fit: plugin not responding (no answer to health checks for 500ms)`; err == nil || err.Error() != want || !errors.Is(err, ErrNotResponding) {
		t.Fatalf("want %q, got %v", want, err)
	}
	// The watchdog pings every timeout/5, so its last answer may predate
	// the SIGSTOP by that much.
	if elapsed < timeout-timeout/5 || elapsed > 20*timeout {
		t.Errorf("not responding after %v; want about %v", elapsed, timeout)
	}
	// The stopped process was killed; later calls fail at once.
	_, err = c.Backend().New(context.Background(), framework.ModelSpec{Inputs: 2})
	if !errors.Is(err, ErrNotResponding) || !strings.HasPrefix(err.Error(), `backend "linear": New: plugin not responding`) {
		t.Fatalf("after the hang: got %v", err)
	}
	done := make(chan struct{})
	go func() { _ = c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close hangs on a stopped plugin")
	}
}

func TestSubprocessCloseStoppedIdle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	const timeout = 500 * time.Millisecond
	c := openPlugin(t, "linear", WithHangTimeout(timeout), WithStderr(io.Discard))
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = c.Close()
	if d := time.Since(start); d > timeout+10*time.Second {
		t.Fatalf("Close of a stopped idle plugin took %v", d)
	}
}

func TestSubprocessProtocolMismatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	var stderr bytes.Buffer
	_, err := Open(context.Background(), "./old-plugin", pluginCmd("v3"), WithStderr(&stderr))
	want := `backend "./old-plugin": start: incompatible plugin: the plugin speaks backend protocol version 3, ` +
		`this lazyvi speaks version 2; rebuild the plugin against this lazyvi's backendplugin package`
	if err == nil || err.Error() != want || !errors.Is(err, ErrIncompatible) {
		t.Fatalf("want %q, got %v", want, err)
	}
}

func TestSubprocessNotAPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	var stderr bytes.Buffer
	_, err := Open(context.Background(), "chatty", pluginCmd("chatty"), WithStderr(&stderr))
	if err == nil || !errors.Is(err, ErrIncompatible) ||
		!strings.HasPrefix(err.Error(), `backend "chatty": start: incompatible plugin: not a lazyvi backend plugin`) {
		t.Fatalf("want an incompatible-plugin error, got %v", err)
	}
}

func TestOpenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Open(ctx, "linear", pluginCmd("linear"))
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), `backend "linear": start: `) {
		t.Fatalf("want a wrapped context.Canceled, got %v", err)
	}
}

// benchBackend answers Kernel and Jacobian with precomputed matrices of the
// sizes of a lazy run, so that the benchmarks time the transport alone.
type benchBackend struct{}

func (benchBackend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Gradients: true, Kernel: true}
}
func (benchBackend) Options() []framework.OptionInfo { return nil }
func (benchBackend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	return &benchModel{linModel: &linModel{b: newLinear(), p: spec.Inputs}}, nil
}

var benchOut = sync.OnceValues(func() (*mat.Dense, *mat.Dense) {
	rng := rand.New(rand.NewPCG(9, 10))
	return randDense(rng, 667, 667), randDense(rng, 3333, 401)
})

type benchModel struct{ *linModel }

func (benchModel) Kernel(context.Context, mat.Matrix, mat.Matrix) (*mat.Dense, error) {
	k, _ := benchOut()
	return k, nil
}

func (benchModel) Jacobian(context.Context, mat.Matrix) (*mat.Dense, error) {
	_, j := benchOut()
	return j, nil
}

func benchTransport(b *testing.B, backend framework.Backend, kind string) {
	m, err := backend.New(context.Background(), framework.ModelSpec{Inputs: 100})
	if err != nil {
		b.Fatal(err)
	}
	defer framework.Release(m)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	switch kind {
	case "Kernel":
		x := randDense(rng, 667, 100)
		b.SetBytes(8 * (667*100 + 667*667))
		for b.Loop() {
			if _, err := m.(framework.Kerneler).Kernel(ctx, x, nil); err != nil {
				b.Fatal(err)
			}
		}
	case "Jacobian":
		x := randDense(rng, 3333, 100)
		b.SetBytes(8 * (3333*100 + 3333*401))
		for b.Loop() {
			if _, err := m.(framework.Gradienter).Jacobian(ctx, x); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkTransport times round trips through a real plugin process (unix
// socket) and in memory (bufconn); MB/s counts input and output matrices.
func BenchmarkTransport(b *testing.B) {
	c := openPlugin(b, "bench")
	mem := inProcess(b, "bench", benchBackend{})
	for _, kind := range []string{"Kernel", "Jacobian"} {
		b.Run(kind+"/process", func(b *testing.B) { benchTransport(b, c.Backend(), kind) })
		b.Run(kind+"/inmemory", func(b *testing.B) { benchTransport(b, mem, kind) })
	}
}
