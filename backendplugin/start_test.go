package backendplugin

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"testing"
	"time"
)

// TestStartTimeout: a plugin that never completes the handshake is given up
// on after the start timeout, with an error naming the backend and the
// timeout, and its process is killed.
func TestStartTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	cmd := pluginCmd("silent")
	_, err := Open(context.Background(), "./silent-plugin", cmd, WithStartTimeout(300*time.Millisecond), WithStderr(io.Discard))
	if !errors.Is(err, ErrStartTimeout) {
		t.Fatalf("want an error wrapping ErrStartTimeout, got %v", err)
	}
	if want := `backend "./silent-plugin": start: plugin start timed out: no handshake within 300ms`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if cmd.ProcessState == nil {
		t.Error("the plugin process was not waited for: still running?")
	}
}

// TestWatchParent: a plugin notices its parent gone when its parent pid
// changes, and not while it stays.
func TestWatchParent(t *testing.T) {
	calls := make(chan int, 100)
	getppid := func() int {
		n := len(calls)
		calls <- 0
		if n < 3 {
			return 42
		}
		return 1 // adopted by init
	}
	gone := make(chan struct{})
	watchParent(42, getppid, time.Millisecond, make(chan struct{}), func() { close(gone) })
	select {
	case <-gone:
	default:
		t.Fatal("watchParent returned without calling gone")
	}
	if n := len(calls); n != 4 {
		t.Errorf("gone after %d checks, want 4 (the parent changed at the 4th)", n)
	}

	// The parent stays: after 20 checks, gone has not been called.
	stop := make(chan struct{})
	done := make(chan struct{})
	checked := make(chan struct{})
	n := 0
	stays := func() int {
		if n++; n == 20 {
			close(checked)
		}
		return 42
	}
	go func() {
		watchParent(42, stays, time.Millisecond, stop, func() { t.Error("gone called while the parent is there") })
		close(done)
	}()
	<-checked
	close(stop)
	<-done
}

// TestKilledBeforeHandshake: a plugin process killed before the handshake
// fails Open with its exit, not as "not a plugin" (a usage error to vi);
// one that exits 0 without a word is not a plugin.
func TestKilledBeforeHandshake(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	_, err := Open(context.Background(), "linear", pluginCmd("killed"), WithStderr(io.Discard))
	if want := `backend "linear": start: plugin process exited: signal: killed before the handshake`; !errors.Is(err, ErrExited) || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	_, err = Open(context.Background(), "true", exec.Command("true"), WithStderr(io.Discard))
	if !errors.Is(err, ErrIncompatible) {
		t.Errorf("a program that exits 0 at once: got %v, want an ErrIncompatible", err)
	}
}
