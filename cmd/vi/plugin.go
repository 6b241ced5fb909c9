package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
)

// open returns the backend and a function that releases it. A built-in
// backend runs in vi's own process (openInProcess) unless s.process asks
// for a subprocess; an external plugin, and a built-in backend with
// s.process, is served by a subprocess (a built-in one by this very
// executable, re-executed with the hidden serveBackendArg), and releasing
// it stops the subprocess.
//
// The backend process's stderr reaches vi's stderr through log, which drops
// go-plugin's own report of the process's exit (vi's error says it).
func (s backendSpec) open(ctx context.Context, log io.Writer) (framework.Backend, func() error, error) {
	if s.attach != "" {
		return s.openAttached(ctx)
	}
	if s.plugin == "" && !s.process {
		return s.openInProcess()
	}
	var cmd *exec.Cmd
	if s.plugin != "" {
		cmd = exec.Command(s.plugin)
	} else {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("backend %s: cannot find the vi executable to serve it: %w", s.name, err)
		}
		cmd = exec.Command(exe, serveBackendArg, s.name)
	}
	c, err := backendplugin.Open(ctx, s.name, cmd, backendplugin.WithStderr(log), backendplugin.WithStartTimeout(s.startTimeout))
	if errors.Is(err, backendplugin.ErrStartTimeout) {
		if s.plugin != "" {
			err = fmt.Errorf("--plugin %s: %w", s.plugin, err)
		}
		return nil, nil, fmt.Errorf("%w (a backend that starts slowly needs a longer --plugin-timeout)", err)
	}
	if err != nil {
		if errors.Is(err, backendplugin.ErrIncompatible) {
			// The user named an executable that is not a backend plugin;
			// go-plugin's explanation of why runs to many lines.
			msg := err.Error()
			if i := strings.Index(msg, ": Unrecognized remote plugin message"); i >= 0 {
				msg = msg[:i]
			}
			return nil, nil, usageError{fmt.Errorf("--plugin %s: %s", s.plugin, msg)}
		}
		return nil, nil, err // names the backend and the step
	}
	return c.Backend(), c.Close, nil
}

// openAttached returns the backend a running process serves (--plugin-attach)
// and a function that detaches from it; the process goes on serving. A
// handshake of another protocol version or format is the user's mistake.
func (s backendSpec) openAttached(ctx context.Context) (framework.Backend, func() error, error) {
	ctx, cancel := context.WithTimeout(ctx, s.startTimeout)
	defer cancel()
	be, stop, err := backendplugin.Attach(ctx, s.name, s.attach)
	if errors.Is(err, backendplugin.ErrIncompatible) {
		return nil, nil, usageError{fmt.Errorf("--plugin-attach %s: %w", s.attach, err)}
	}
	if err != nil {
		return nil, nil, err
	}
	return be, func() error { stop(); return nil }, nil
}

// openInProcess returns the registered built-in backend s.name, run in
// vi's own process: its models' kernels, products and predictions are
// calls on memory lazy reads in place, where a subprocess sends each one
// through the plugin protocol and faults the copies' fresh memory in on
// both sides, a cost fixed per call that at a few thousand rows is most of
// lazy's (research/2026-11-27e-backend-in-process.md). While it is open,
// the collector runs at backendGCPercent unless GOGC is set; releasing it
// restores the setting.
func (s backendSpec) openInProcess() (framework.Backend, func() error, error) {
	be, err := framework.LookupBackend(s.name)
	if err != nil {
		return nil, nil, err
	}
	restore := useBackendGC()
	return be, func() error {
		restore()
		return nil
	}, nil
}

// openLogged is open with the backend process's stderr passed on to stderr
// through a pluginLog that clears prog ahead of each line. Its close function
// stops the process, then writes the log's incomplete last line.
func (s backendSpec) openLogged(ctx context.Context, stderr io.Writer, prog *progress.Meter) (framework.Backend, func() error, error) {
	plog := &pluginLog{w: stderr, before: prog.Clear}
	be, closeBackend, err := s.open(ctx, plog)
	if err != nil {
		plog.Flush()
		return nil, nil, err
	}
	return be, func() error {
		defer plog.Flush()
		return closeBackend()
	}, nil
}

// serveBackend serves the registered backend named by args[0] over the
// plugin protocol; it is what "vi __serve-backend NAME" runs in the
// subprocess. Nothing may write to stdout before the handshake.
func serveBackend(args []string) error {
	if len(args) != 1 {
		return framework.Usagef("%s: want one backend name, got %d arguments", serveBackendArg, len(args))
	}
	b, err := framework.LookupBackend(args[0])
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(backendMemoryLimit)
	}
	useBackendGC()
	backendplugin.Serve(b)
	return nil
}

// backendMemoryLimit is the soft memory limit of a built-in backend's
// process (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT sets one: one
// and a half times the networks' memo budget (512 MiB, shared by the models
// it serves), so that the garbage collector runs before the heap of a long
// lazy run, mostly freed float64 buffers, doubles the memory it holds
// (GOGC's default lets it), without bounding a larger problem's live heap.
// Its cost is small: the heap is mostly pointer-free arrays, which the
// collector does not scan.
const backendMemoryLimit = 768 << 20

// backendGCPercent is a built-in backend's GOGC unless GOGC sets one: the
// heap may grow to three times what is live before the collector runs,
// instead of twice. What the process keeps is small (the memo's signals of
// the reductions in flight: the estimators forget their rows once done),
// and what it allocates per call is large (a kernel's n x n, a pass's
// activations), so that at the default the collector ran three times as
// often as the live heap needs, and the runtime returned pages to the
// system only to fault them in again at the next call.
const backendGCPercent = 200

// useBackendGC sets the collector to backendGCPercent unless GOGC is set,
// and returns the function that restores the previous setting.
func useBackendGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(backendGCPercent)
	return func() { debug.SetGCPercent(prev) }
}

// notifyContext returns a context cancelled on SIGINT or SIGTERM, so that a
// run stops its workers and any backend subprocess before exiting. A
// second signal while that cleanup runs ends the process at once (exit
// code 1, saying so on stderr): a backend subprocess dies with vi. So does
// a cleanup still running stopGrace after the first signal (a stage deep
// in a computation that does not look at its context): one signal ends
// vi within seconds, whatever it was doing; the checkpoint keeps every
// reduced model finished before it.
func notifyContext(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			cancel()
		case <-done:
			return
		}
		grace := time.NewTimer(stopGrace)
		defer grace.Stop()
		select {
		case <-sig:
			fmt.Fprintln(stderr, "vi: interrupted again: exiting without cleanup")
			os.Exit(exitError)
		case <-grace.C:
			fmt.Fprintf(stderr, "vi: interrupted: still stopping after %v: exiting without cleanup\n", stopGrace)
			os.Exit(exitError)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// stopGrace is how long vi waits, after a signal, for a run to stop of
// itself before it exits regardless.
var stopGrace = 4 * time.Second

// usageError marks err as the user's mistake (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Is(target error) bool { return target == framework.ErrUsage }

// pluginLog passes the backend process's stderr on to w line by line,
// calling before ahead of each line (to clear the progress bar) and dropping
// the lines that repeat what vi's error message says.
type pluginLog struct {
	w      io.Writer
	before func()

	mu   sync.Mutex
	part []byte // an incomplete last line
}

// redundant are substrings of go-plugin's log lines that vi's own error
// message covers.
var redundant = []string{"[ERROR] plugin: plugin process exited"}

func (l *pluginLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := l.part[:i+1]
		if !containsAny(line, redundant) {
			if l.before != nil {
				l.before()
			}
			l.w.Write(line)
		}
		l.part = l.part[i+1:]
	}
}

// Flush writes an incomplete last line.
func (l *pluginLog) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 && !containsAny(l.part, redundant) {
		l.w.Write(append(l.part, '\n'))
	}
	l.part = nil
}

func containsAny(b []byte, subs []string) bool {
	for _, s := range subs {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// backendSpec says which backend to run and how.
type backendSpec struct {
	name   string // for messages and the report
	plugin string // external executable; "" for a built-in backend
	// attach is the handshake line of a backend a running process serves
	// (--plugin-attach); "" to start or run one.
	attach string
	// process serves a built-in backend from a subprocess, as a plugin
	// is served (--backend-process); without it a built-in backend runs
	// in vi's own process.
	process bool
	// startTimeout bounds the plugin handshake (--plugin-timeout); 0:
	// backendplugin's default.
	startTimeout time.Duration
}

// external reports whether the backend is not one built into vi: a
// plugin's, or an attached one.
func (s backendSpec) external() bool { return s.plugin != "" || s.attach != "" }

// attachSpec is the backendSpec of --plugin-attach line: named by --backend
// when given (set), else "plugin"; it excludes --plugin and
// --backend-process, which say how to start a backend.
func attachSpec(line, name string, set map[string]bool) (backendSpec, error) {
	for _, f := range []string{"plugin", "backend-process"} {
		if set[f] {
			return backendSpec{}, framework.Usagef("--plugin-attach and --%s exclude each other (--plugin-attach uses a backend that is already served)", f)
		}
	}
	if !set["backend"] {
		name = "plugin"
	}
	return backendSpec{name: name, attach: strings.TrimSpace(line)}, nil
}

// newBackendSpec checks the backend flags: a built-in name must be
// registered, a plugin must exist and be executable.
func newBackendSpec(name string, nameSet bool, plugin string) (backendSpec, error) {
	if plugin == "" {
		if _, err := framework.LookupBackend(name); err != nil {
			return backendSpec{}, err
		}
		return backendSpec{name: name}, nil
	}
	fi, err := os.Stat(plugin)
	if err != nil && !strings.ContainsRune(plugin, filepath.Separator) {
		// A bare name that is no file here: an executable on PATH, as a
		// shell finds it (--plugin lazyvi-torch).
		found, lookErr := exec.LookPath(plugin)
		if lookErr != nil {
			return backendSpec{}, framework.Usagef("--plugin %s: no such file here, and no executable of that name on PATH", plugin)
		}
		plugin = found
		fi, err = os.Stat(plugin)
	}
	switch {
	case err != nil:
		return backendSpec{}, framework.Usagef("--plugin %s: no such file", plugin)
	case fi.IsDir():
		return backendSpec{}, framework.Usagef("--plugin %s: is a directory, want an executable", plugin)
	case fi.Mode()&0o111 == 0:
		return backendSpec{}, framework.Usagef("--plugin %s: not executable", plugin)
	}
	if !nameSet {
		name = filepath.Base(plugin)
	}
	abs, err := filepath.Abs(plugin)
	if err != nil {
		return backendSpec{}, err
	}
	return backendSpec{name: name, plugin: abs}, nil
}
