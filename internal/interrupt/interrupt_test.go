package interrupt

import (
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestContextCancelledBySignal: SIGINT cancels the context (and does not
// end the process); the stop function cancels it too, without a signal.
func TestContextCancelledBySignal(t *testing.T) {
	ctx, stop := Context(io.Discard, "test")
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatal("SIGINT did not cancel the context within a minute")
	}

	ctx2, stop2 := Context(io.Discard, "test")
	if ctx2.Err() != nil {
		t.Fatal("a new context is cancelled before any signal")
	}
	stop2()
	if ctx2.Err() == nil {
		t.Error("stop did not cancel the context")
	}
}
