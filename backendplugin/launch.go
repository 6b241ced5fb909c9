package backendplugin

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// A Launch says which backend to run and how: a registered built-in
// backend in this process, the same one served from a subprocess, an
// external plugin executable, or a backend a running process already
// serves.
type Launch struct {
	// Name is the backend's name: the registered backend's for a
	// built-in one, the report's for the others.
	Name string
	// Plugin is an external plugin executable (see FindPlugin); "" for a
	// built-in backend.
	Plugin string
	// Attach is the handshake line of a backend a running process serves
	// (see Attach); "" to start or run one.
	Attach string
	// Process serves a built-in backend from a subprocess, as a plugin
	// is served: this very executable, run with ServeArgs and then Name,
	// which must call ServeBuiltin. Without it a built-in backend runs in
	// this process.
	Process   bool
	ServeArgs []string
	// StartTimeout bounds the plugin handshake, and the wait for an
	// attached backend; 0: DefaultStartTimeout.
	StartTimeout time.Duration
}

// External reports whether the backend is not a built-in one: a
// plugin's, or an attached one.
func (l Launch) External() bool { return l.Plugin != "" || l.Attach != "" }

// Open returns the backend and a function that releases it. A built-in
// backend runs in this process unless l.Process asks for a subprocess;
// an external plugin, and a built-in backend with l.Process, is served by
// a subprocess, and releasing it stops the subprocess; an attached
// backend's process goes on serving after the release.
//
// The backend process's stderr reaches log (see LogFilter). A plugin that
// does not complete the handshake within l.StartTimeout fails with an
// error wrapping ErrStartTimeout; one that speaks another protocol (or is
// no plugin at all) with one wrapping ErrIncompatible.
func (l Launch) Open(ctx context.Context, log io.Writer) (framework.Backend, func() error, error) {
	if l.Attach != "" {
		return l.openAttached(ctx)
	}
	if l.Plugin == "" && !l.Process {
		return l.openInProcess()
	}
	var cmd *exec.Cmd
	if l.Plugin != "" {
		cmd = exec.Command(l.Plugin)
	} else {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("backend %s: cannot find the executable to serve it: %w", l.Name, err)
		}
		cmd = exec.Command(exe, append(append([]string{}, l.ServeArgs...), l.Name)...)
	}
	c, err := Open(ctx, l.Name, cmd, WithStderr(log), WithStartTimeout(l.StartTimeout))
	if err != nil {
		return nil, nil, err // names the backend and the step
	}
	return c.Backend(), c.Close, nil
}

// openAttached returns the backend a running process serves and a
// function that detaches from it; the process goes on serving.
func (l Launch) openAttached(ctx context.Context) (framework.Backend, func() error, error) {
	timeout := l.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	be, stop, err := Attach(ctx, l.Name, strings.TrimSpace(l.Attach))
	if err != nil {
		return nil, nil, err
	}
	return be, func() error { stop(); return nil }, nil
}

// openInProcess returns the registered built-in backend l.Name, run in
// this process: its models' kernels, products and predictions are calls
// on memory that the estimators read in place, where a subprocess sends
// each one through the plugin protocol and faults the copies' fresh
// memory in on both sides, a cost fixed per call that at a few thousand
// rows is most of lazy's. While it is open, the collector runs at
// BackendGCPercent unless GOGC is set; releasing it restores the setting.
func (l Launch) openInProcess() (framework.Backend, func() error, error) {
	be, err := framework.LookupBackend(l.Name)
	if err != nil {
		return nil, nil, err
	}
	restore := UseBackendGC()
	return be, func() error {
		restore()
		return nil
	}, nil
}

// ServeBuiltin serves the registered backend name over the plugin
// protocol: what the subprocess of a Launch with Process runs. Nothing may
// write to stdout before it. Unless GOMEMLIMIT is set it bounds the
// process's soft memory limit at BackendMemoryLimit, and the collector
// runs at BackendGCPercent unless GOGC is set.
func ServeBuiltin(name string) error {
	b, err := framework.LookupBackend(name)
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(BackendMemoryLimit)
	}
	UseBackendGC()
	Serve(b)
	return nil
}

// BackendMemoryLimit is the soft memory limit of a built-in backend's
// process (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT sets one: one
// and a half times the networks' memo budget (1 GiB, shared by the models
// it serves), so that the garbage collector runs before the heap of a long
// lazy run, mostly freed float64 buffers, doubles the memory it holds
// (GOGC's default lets it), without bounding a larger problem's live heap.
// Its cost is small: the heap is mostly pointer-free arrays, which the
// collector does not scan.
const BackendMemoryLimit = 1536 << 20

// BackendGCPercent is a built-in backend's GOGC unless GOGC sets one: the
// heap may grow to three times what is live before the collector runs,
// instead of twice. What the process keeps is small (the memo's signals of
// the reductions in flight: the estimators forget their rows once done),
// and what it allocates per call is large (a kernel's n x n, a pass's
// activations), so that at the default the collector runs more often than
// the live heap needs, and the runtime returns pages to the system only to
// fault them in again at the next call.
const BackendGCPercent = 200

// UseBackendGC sets the collector to BackendGCPercent unless GOGC is set,
// and returns the function that restores the previous setting.
func UseBackendGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(BackendGCPercent)
	return func() { debug.SetGCPercent(prev) }
}

// FindPlugin returns the absolute path of the plugin executable path: a
// file here, or else a bare name looked up on PATH as a shell does
// ("lazyvi-torch"). A path that is no file, a directory or not executable
// is a usage error (framework.ErrUsage) whose message starts with path.
func FindPlugin(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil && !strings.ContainsRune(path, filepath.Separator) {
		found, lookErr := exec.LookPath(path)
		if lookErr != nil {
			return "", framework.Usagef("%s: no such file here, and no executable of that name on PATH", path)
		}
		path = found
		fi, err = os.Stat(path)
	}
	switch {
	case err != nil:
		return "", framework.Usagef("%s: no such file", path)
	case fi.IsDir():
		return "", framework.Usagef("%s: is a directory, want an executable", path)
	case fi.Mode()&0o111 == 0:
		return "", framework.Usagef("%s: not executable", path)
	}
	return filepath.Abs(path)
}
