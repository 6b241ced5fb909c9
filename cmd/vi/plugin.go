package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
)

// open returns the backend and a function that releases it
// (backendplugin.Launch.Open): a built-in backend runs in vi's own process
// unless s.process asks for a subprocess, this very executable re-executed
// with the hidden serveBackendArg. The backend process's stderr reaches
// vi's stderr through log. Errors name the flags that would fix them.
func (s backendSpec) open(ctx context.Context, log io.Writer) (framework.Backend, func() error, error) {
	l := backendplugin.Launch{Name: s.name, Plugin: s.plugin, Attach: s.attach, Process: s.process,
		ServeArgs: []string{serveBackendArg}, StartTimeout: s.startTimeout}
	be, release, err := l.Open(ctx, log)
	switch {
	case err == nil:
		return be, release, nil
	case s.attach != "" && errors.Is(err, backendplugin.ErrIncompatible):
		// A handshake of another protocol version or format.
		return nil, nil, usageError{fmt.Errorf("--plugin-attach %s: %w", s.attach, err)}
	case s.attach != "":
		return nil, nil, err
	case errors.Is(err, backendplugin.ErrStartTimeout):
		if s.plugin != "" {
			err = fmt.Errorf("--plugin %s: %w", s.plugin, err)
		}
		return nil, nil, fmt.Errorf("%w (a backend that starts slowly needs a longer --plugin-timeout)", err)
	case errors.Is(err, backendplugin.ErrIncompatible):
		// The user named an executable that is not a backend plugin;
		// go-plugin's explanation of why runs to many lines.
		msg := err.Error()
		if i := strings.Index(msg, ": Unrecognized remote plugin message"); i >= 0 {
			msg = msg[:i]
		}
		return nil, nil, usageError{fmt.Errorf("--plugin %s: %s", s.plugin, msg)}
	}
	return nil, nil, err
}

// openLogged is open with the backend process's stderr passed on to stderr
// through a backendplugin.LogFilter that clears prog ahead of each line.
// Its close function stops the process, then writes the log's incomplete
// last line.
func (s backendSpec) openLogged(ctx context.Context, stderr io.Writer, prog *progress.Meter) (framework.Backend, func() error, error) {
	plog := backendplugin.NewLogFilter(stderr, prog.Clear)
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
// plugin protocol (backendplugin.ServeBuiltin); it is what
// "vi __serve-backend NAME" runs in the subprocess.
func serveBackend(args []string) error {
	if len(args) != 1 {
		return framework.Usagef("%s: want one backend name, got %d arguments", serveBackendArg, len(args))
	}
	return backendplugin.ServeBuiltin(args[0])
}

// usageError marks err as the user's mistake (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Is(target error) bool { return target == framework.ErrUsage }

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
	plugin, err := backendplugin.FindPlugin(plugin)
	if err != nil {
		return backendSpec{}, fmt.Errorf("--plugin %w", err)
	}
	if !nameSet {
		name = filepath.Base(plugin)
	}
	return backendSpec{name: name, plugin: plugin}, nil
}
