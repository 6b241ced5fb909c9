package backendplugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/lazyvi/lazyvi/framework"
)

// DefaultHangTimeout is how long a call may go without the plugin answering
// a health check before it fails with ErrNotResponding.
const DefaultHangTimeout = 30 * time.Second

// DefaultStartTimeout is how long Open waits for a plugin's handshake when
// neither WithStartTimeout nor a deadline of its context says: long
// enough for a plugin that imports a large runtime (the PyTorch plugin
// imports torch) on a heavily loaded machine with several plugins starting
// at once; a plugin that never answers is given up on after this.
const DefaultStartTimeout = 60 * time.Second

// closeGrace is how long Close waits for a graceful exit before SIGKILL, if
// the hang timeout is not shorter.
const closeGrace = 5 * time.Second

// releaseGrace is how long releasing a model waits for the plugin's answer
// before the plugin is taken for hung (model.Close).
const releaseGrace = 5 * time.Second

type options struct {
	hangTimeout  time.Duration
	startTimeout time.Duration
	stderr       io.Writer
}

// An Option configures Open.
type Option func(*options)

// WithHangTimeout sets how long a call may go without the plugin answering
// a health check (they are sent every timeout/5, at most every 5 s, while
// calls are in flight) before the call fails with ErrNotResponding and the
// process is killed. A plugin busy computing still answers; only a stopped
// or deadlocked process does not. Zero or negative disables the check. The
// default is DefaultHangTimeout.
func WithHangTimeout(d time.Duration) Option { return func(o *options) { o.hangTimeout = d } }

// WithStartTimeout sets how long Open waits for the plugin process to
// complete the handshake before it kills the process and fails with an
// error wrapping ErrStartTimeout (a deadline of Open's context that comes
// sooner wins). Without it (or with zero or less), Open waits until its
// context's deadline, or DefaultStartTimeout when it has none.
func WithStartTimeout(d time.Duration) Option { return func(o *options) { o.startTimeout = d } }

// WithStderr sets where the plugin process's stderr and stdout (after the
// handshake) and go-plugin's error log go. The default is os.Stderr; the
// plugin's stdout never reaches lazyvi's stdout.
func WithStderr(w io.Writer) Option { return func(o *options) { o.stderr = w } }

// Client is a running backend plugin process and the framework.Backend it
// serves.
type Client struct {
	name string
	cmd  *exec.Cmd
	pc   *plugin.Client
	r    *remote

	grace        time.Duration // Close's wait for a graceful exit
	startTimeout time.Duration
	closeOnce    sync.Once

	// release ends the goroutine that started the process (and holds its
	// thread, see Open) once kill has ended the process; releaseOnce
	// guards it.
	release     chan struct{}
	releaseOnce sync.Once
}

// Open starts the plugin process cmd (unstarted; go-plugin adds the
// handshake variables to its environment), performs the handshake, and asks
// the backend for its capabilities and options. name is the backend's name
// for error messages ("mlp", or the plugin's path). ctx bounds the start-up
// only; cancel it, and the plugin process is killed. So does a plugin that
// does not complete the handshake within the start timeout
// (WithStartTimeout).
//
// On Linux the plugin process gets the parent-death signal SIGKILL (unless
// cmd.SysProcAttr already sets one): it dies with lazyvi even when lazyvi
// is killed without a chance to call Close.
//
// A plugin that speaks another ProtocolVersion, or is not a lazyvi plugin,
// fails with an *Error wrapping ErrIncompatible.
func Open(ctx context.Context, name string, cmd *exec.Cmd, opts ...Option) (*Client, error) {
	o := &options{hangTimeout: DefaultHangTimeout, stderr: os.Stderr}
	for _, opt := range opts {
		opt(o)
	}
	dieWithParent(cmd)
	cfg := &plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          plugin.PluginSet{pluginName: &backendPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		GRPCDialOptions:  dialOptions(),
		Stderr:           o.stderr,
		SyncStdout:       o.stderr,
		SyncStderr:       o.stderr,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:   "plugin",
			Level:  hclog.Error,
			Output: o.stderr,
		}),
	}
	cfg.StartTimeout = o.startTimeout
	if dl, ok := ctx.Deadline(); ok {
		untilDL := max(time.Until(dl), time.Millisecond)
		if cfg.StartTimeout <= 0 || untilDL < cfg.StartTimeout {
			cfg.StartTimeout = untilDL
		}
	} else if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	pc := plugin.NewClient(cfg)
	c := &Client{name: name, cmd: cmd, pc: pc, grace: closeGrace, startTimeout: cfg.StartTimeout, release: make(chan struct{})}
	if o.hangTimeout > 0 {
		c.grace = min(c.grace, o.hangTimeout)
	}

	type started struct {
		raw any
		err error
	}
	ch := make(chan started, 1)
	go func() {
		// Linux sends the parent-death signal when the thread that
		// forked the plugin ends, not the process, and the Go runtime
		// ends a thread whose goroutine exits locked to it: this
		// goroutine starts the process on a thread of its own and keeps
		// it until Close or a failed start has ended the process (then
		// its exit ends the thread).
		runtime.LockOSThread()
		var s started
		cp, err := pc.Client()
		if err == nil {
			s.raw, err = cp.Dispense(pluginName)
		}
		s.err = err
		ch <- s
		<-c.release
	}()
	var s started
	select {
	case <-ctx.Done():
		go func() { <-ch; c.kill() }()
		return nil, &Error{Backend: name, Op: "start", Err: ctx.Err()}
	case s = <-ch:
	}
	if s.err != nil {
		c.kill()
		return nil, &Error{Backend: name, Op: "start", Err: c.startError(s.err)}
	}
	conn, ok := s.raw.(*grpc.ClientConn)
	if !ok {
		c.kill()
		return nil, &Error{Backend: name, Op: "start", Err: errNoConn}
	}
	r, err := newRemote(ctx, name, conn, o, c.exited, c.killNow)
	if err != nil {
		c.kill()
		return nil, err
	}
	c.r = r
	return c, nil
}

var pluginVersionRE = regexp.MustCompile(`Plugin version: (\d+)`)

// startError explains go-plugin's start-up errors.
func (c *Client) startError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "incompatible API version"):
		offered := "another version"
		if m := pluginVersionRE.FindStringSubmatch(msg); m != nil {
			offered = "version " + m[1]
		}
		return fmt.Errorf("%w: the plugin speaks backend protocol %s, this lazyvi speaks version %d; "+
			"rebuild the plugin against this lazyvi's backendplugin package", ErrIncompatible, offered, ProtocolVersion)
	case strings.Contains(msg, "Failed to read any lines from plugin's stdout"):
		// Its stdout closed without a word: the process ended. Killed,
		// or failed (a plugin's import error, say), that is the error; a
		// program that ended well without serving is not a plugin.
		if exit := waitExited(c.exited, 2*time.Second); exit != nil && !c.cmd.ProcessState.Success() {
			return fmt.Errorf("%w before the handshake", exit)
		}
		return fmt.Errorf("%w: not a lazyvi backend plugin (it must call backendplugin.Serve and write nothing to stdout before): "+
			"it ended without a handshake", ErrIncompatible)
	case strings.Contains(msg, "Unrecognized remote plugin message"),
		strings.Contains(msg, "incompatible core API version"),
		strings.Contains(msg, "unsupported plugin protocol"):
		return fmt.Errorf("%w: not a lazyvi backend plugin (it must call backendplugin.Serve and write nothing to stdout before): %v",
			ErrIncompatible, err)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%w: no handshake within %v", ErrStartTimeout, c.startTimeout.Round(time.Millisecond))
	case strings.Contains(msg, "plugin exited before we could connect"):
		if exit := c.exited(); exit != nil {
			return fmt.Errorf("%w before the handshake", exit)
		}
	}
	return err
}

// exited returns a non-nil error wrapping ErrExited once the process has
// exited, saying how.
func (c *Client) exited() error {
	if !c.pc.Exited() {
		return nil
	}
	how := "unknown status"
	if ps := c.cmd.ProcessState; ps != nil {
		how = ps.String()
	}
	return fmt.Errorf("%w: %s", ErrExited, how)
}

// kill ends the process as go-plugin does (gracefully, then forcibly) and
// waits for it, then lets the goroutine that started it go.
func (c *Client) kill() {
	c.pc.Kill()
	c.releaseOnce.Do(func() { close(c.release) })
}

// killNow kills the process at once (SIGKILL; it also ends a stopped one).
func (c *Client) killNow() {
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
}

// Backend returns the plugin's backend. Its Capabilities and Options were
// fetched by Open; New creates a model in the plugin process, whose client
// is framework.Capable (see the package doc). Every error is an *Error.
func (c *Client) Backend() framework.Backend { return c.r }

// Close fails the calls in flight with ErrClosed and ends the plugin
// process: gracefully if it answers, otherwise with SIGKILL after the hang
// timeout or 5 s, whichever is shorter. It is safe to call more than once and always returns nil.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.r.c.shutdown()
		done := make(chan struct{})
		go func() { c.kill(); close(done) }()
		select {
		case <-done:
		case <-time.After(c.grace):
			c.killNow()
			<-done
		}
	})
	return nil
}
