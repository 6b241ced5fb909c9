package backendplugin

import (
	"errors"
	"fmt"
)

// Error is the error of every call to a plugin backend made through a
// Client: which backend (the name given to Open), which step, and why. Its
// text reads
//
//	backend "mlp": Fit: plugin process exited: signal: killed
//
// Err keeps its identity under errors.Is: framework.ErrUsage for the
// backend's usage errors, context.Canceled and context.DeadlineExceeded,
// ErrExited, ErrNotResponding, ErrClosed, ErrIncompatible, ErrStartTimeout.
type Error struct {
	Backend string // the name given to Open
	Op      string // "start", "Capabilities", "Options", "New", "Fit", "Predict", ...
	Err     error
}

func (e *Error) Error() string { return fmt.Sprintf("backend %q: %s: %v", e.Backend, e.Op, e.Err) }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

var (
	// ErrExited: the plugin process has exited (crashed or was killed); the
	// error's text adds how ("plugin process exited: signal: killed").
	ErrExited = errors.New("plugin process exited")
	// ErrNotResponding: the plugin process did not answer health checks for
	// the hang timeout while a call was in flight. The Client then kills the
	// process and every later call fails the same way.
	ErrNotResponding = errors.New("plugin not responding")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("plugin client closed")
	// ErrIncompatible: the plugin speaks another protocol version, or is not
	// a lazyvi backend plugin at all.
	ErrIncompatible = errors.New("incompatible plugin")
	// ErrStartTimeout: the plugin process did not complete the handshake
	// within the start timeout (WithStartTimeout); Open has killed it.
	ErrStartTimeout = errors.New("plugin start timed out")
)

// isFatal reports errors after which the plugin process is gone or unusable.
func isFatal(err error) bool {
	return errors.Is(err, ErrExited) || errors.Is(err, ErrNotResponding) || errors.Is(err, ErrClosed)
}
