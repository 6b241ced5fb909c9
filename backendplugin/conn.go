package backendplugin

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"gonum.org/v1/gonum/mat"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// conn is lazyvi's end of one plugin connection: the RPC clients, the
// calls in flight and their lifecycle (do), the translation of their errors
// into what the caller sees, the matrix handles (withArgs), and the
// watchdog: while calls are in flight it pings the plugin's health
// service, and when no ping has succeeded for hangTimeout it fails them all
// with ErrNotResponding and kills the process. The backend (remote) and its
// models (model) make every call through it.
type conn struct {
	name   string // the backend's, for errors
	cc     grpc.ClientConnInterface
	rpc    pb.BackendClient
	health grpc_health_v1.HealthClient
	// handles: the matrices the plugin keeps for this client.
	handles *handleTable

	hangTimeout time.Duration // 0: no watchdog
	pingEvery   time.Duration
	exited      func() error // non-nil once the process has exited; nil in-process
	kill        func()       // kills the process; nil in-process

	mu       sync.Mutex
	calls    map[uint64]context.CancelCauseFunc
	nextCall uint64
	lastOK   time.Time // last sign of life: a ping answered, or the first call after idling
	broken   error     // sticky: ErrNotResponding or ErrClosed
	stop     chan struct{}
	stopped  chan struct{}
}

// newConn starts the watchdog on cc.
func newConn(name string, cc grpc.ClientConnInterface, o *options, exited func() error, kill func()) *conn {
	c := &conn{
		name:        name,
		cc:          cc,
		health:      grpc_health_v1.NewHealthClient(cc),
		hangTimeout: o.hangTimeout,
		exited:      exited,
		kill:        kill,
		handles:     newHandleTable(defaultKeptBytes),
		calls:       make(map[uint64]context.CancelCauseFunc),
		stop:        make(chan struct{}),
		stopped:     make(chan struct{}),
	}
	c.rpc = pb.NewBackendClient(cc)
	if c.hangTimeout > 0 {
		c.pingEvery = min(max(c.hangTimeout/5, 10*time.Millisecond), 5*time.Second)
		go c.watch()
	} else {
		close(c.stopped)
	}
	return c
}

// shutdown fails the calls in flight with ErrClosed and stops the watchdog.
func (c *conn) shutdown() {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = ErrClosed
	}
	for _, cancel := range c.calls {
		cancel(ErrClosed)
	}
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.mu.Unlock()
	<-c.stopped
}

func (c *conn) watch() {
	defer close(c.stopped)
	t := time.NewTicker(c.pingEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.mu.Lock()
		idle := len(c.calls) == 0 || c.broken != nil
		c.mu.Unlock()
		if idle {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.pingEvery)
		_, err := c.health.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
		cancel()
		if err != nil && c.exited != nil && c.exited() != nil {
			continue // the calls fail with the exit on their own
		}
		now := time.Now()
		hung := false
		c.mu.Lock()
		switch {
		case err == nil:
			c.lastOK = now
		case len(c.calls) > 0 && c.broken == nil && now.Sub(c.lastOK) >= c.hangTimeout:
			hung = true
		}
		c.mu.Unlock()
		if hung {
			c.giveUp(fmt.Errorf("%w (no answer to health checks for %v)", ErrNotResponding, c.hangTimeout))
		}
	}
}

// giveUp breaks the connection with err (ErrNotResponding) unless it is
// broken already: the calls in flight and every later call fail with it,
// and the process is killed.
func (c *conn) giveUp(err error) {
	c.mu.Lock()
	if c.broken != nil {
		c.mu.Unlock()
		return
	}
	c.broken = err
	for _, cancel := range c.calls {
		cancel(err)
	}
	c.mu.Unlock()
	if c.kill != nil {
		c.kill()
	}
}

// do runs one RPC under the watchdog and turns its error into an *Error.
func (c *conn) do(ctx context.Context, op string, f func(context.Context) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.mu.Lock()
	err := c.broken
	if err == nil && c.exited != nil {
		err = c.exited()
	}
	if err != nil {
		c.mu.Unlock()
		return &Error{Backend: c.name, Op: op, Err: err}
	}
	if len(c.calls) == 0 {
		c.lastOK = time.Now()
	}
	c.nextCall++
	id := c.nextCall
	c.calls[id] = cancel
	c.mu.Unlock()

	err = f(ctx)

	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
	if err == nil {
		return nil
	}
	return &Error{Backend: c.name, Op: op, Err: c.translate(ctx, err)}
}

// translate turns a gRPC error into the error the caller sees.
func (c *conn) translate(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && isFatal(cause) {
		return cause
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	switch st.Code() {
	case codes.InvalidArgument:
		return &remoteError{msg: st.Message(), kind: framework.ErrUsage}
	case codes.Canceled:
		return &remoteError{msg: st.Message(), kind: context.Canceled}
	case codes.DeadlineExceeded:
		return &remoteError{msg: st.Message(), kind: context.DeadlineExceeded}
	case codes.Unavailable:
		if exit := c.waitExit(3 * time.Second); exit != nil {
			return exit
		}
		return fmt.Errorf("lost connection to plugin: %s", st.Message())
	}
	return &remoteError{msg: st.Message()}
}

// waitExit waits up to d for the process to be seen exited: the connection
// breaks a moment before go-plugin has reaped the process.
func (c *conn) waitExit(d time.Duration) error {
	if c.exited == nil {
		return nil
	}
	return waitExited(c.exited, d)
}

// waitExited waits up to d for exited to report the process's exit, and
// returns that (nil if it did not come).
func waitExited(exited func() error, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		if err := exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// withArgs runs call, an RPC on the matrix arguments xs (call gets one
// message per x, nil for a nil x). A matrix of at least minKeptElems values
// goes under its handle: with its data until a call that carried them has
// succeeded, then as a reference.
func (c *conn) withArgs(xs []mat.Matrix, call func(ms []*pb.Matrix) error) error {
	ms := make([]*pb.Matrix, len(xs))
	hs := make([]*handle, len(xs))
	for i, x := range xs {
		m := requestPB(x)
		ms[i] = m
		if m == nil || len(m.Data) < 8*minKeptElems {
			continue
		}
		h := c.handles.pin(matrixKey(m), int64(len(m.Data)))
		if h == nil {
			continue
		}
		hs[i] = h
		c.handles.setSource(h, spanOf(x))
		if c.handles.isStored(h) {
			ms[i] = &pb.Matrix{Rows: m.Rows, Cols: m.Cols, Handle: h.id}
		} else {
			m.Handle = h.id // m is fresh: requestPB aliases only the values
		}
	}
	err := call(ms)
	for _, h := range hs {
		if h != nil {
			c.handles.unpin(h, err == nil)
		}
	}
	return err
}

// flushReleases tells the plugin which kept matrices this client has
// dropped, waiting at most releaseGrace (or the hang timeout, if shorter).
// A failure is ignored: the plugin then keeps some matrices longer, and a
// failed connection fails the next call anyway.
func (c *conn) flushReleases() { c.release(c.handles.takeReleased()) }

// release tells the plugin to release the kept matrices hs, as
// flushReleases does.
func (c *conn) release(hs []uint64) {
	if len(hs) == 0 {
		return
	}
	grace := releaseGrace
	if c.hangTimeout > 0 {
		grace = min(grace, c.hangTimeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_ = c.do(ctx, "Release", func(ctx context.Context) error {
		_, err := c.rpc.Release(ctx, &pb.ReleaseRequest{MatrixHandles: hs})
		return err
	})
}
