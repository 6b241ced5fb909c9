// Package interrupt turns SIGINT and SIGTERM into a cancelled context,
// with a bound on how long the cleanup may take.
package interrupt

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Context returns a context cancelled on SIGINT or SIGTERM, so that a run
// stops its workers and any backend subprocess before exiting, and the
// function that stops listening and cancels it. A second signal while
// that cleanup runs ends the process at once (exit code 1, saying so on
// stderr, the message starting with "name: "): a backend subprocess dies
// with it. So does a cleanup still running Grace after the first signal
// (a stage deep in a computation that does not look at its context): one
// signal ends the process within seconds, whatever it was doing.
func Context(stderr io.Writer, name string) (context.Context, context.CancelFunc) {
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
		grace := time.NewTimer(Grace)
		defer grace.Stop()
		select {
		case <-sig:
			fmt.Fprintf(stderr, "%s: interrupted again: exiting without cleanup\n", name)
			os.Exit(1)
		case <-grace.C:
			fmt.Fprintf(stderr, "%s: interrupted: still stopping after %v: exiting without cleanup\n", name, Grace)
			os.Exit(1)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// Grace is how long the process waits, after a signal, for a run to stop
// of itself before it exits regardless.
const Grace = 4 * time.Second
