package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
)

// open starts the backend's subprocess and returns the backend it serves
// and a function that stops the subprocess. A built-in backend is served by
// this very executable, re-executed with the hidden serveBackendArg.
func (s backendSpec) open(ctx context.Context) (framework.Backend, func() error, error) {
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
	c, err := backendplugin.Open(ctx, s.name, cmd)
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
	backendplugin.Serve(b)
	return nil
}

// notifyContext returns a context cancelled on SIGINT or SIGTERM, so that a
// run stops its workers and its backend subprocess before exiting.
func notifyContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// usageError marks err as the user's mistake (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string        { return e.err.Error() }
func (e usageError) Is(target error) bool { return target == framework.ErrUsage }
