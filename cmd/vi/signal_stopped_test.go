package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterruptStoppedBackend: with the backend stopped (SIGSTOP: it
// answers nothing), an interrupt ends vi after interrupt.Grace (4 s), before the
// release grace (5 s) and not after the 30 s hang timeout per model, and a
// second interrupt ends it at once; either way with exit code 1 and the
// backend gone.
func TestInterruptStoppedBackend(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the backend process through /proc")
	}
	t.Parallel()
	dir := t.TempDir()
	if _, stderr, code := viExec(t, dir, "simulate", "--setting", "highdim", "--n", "3000", "--out", "hd.csv"); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	for _, tc := range []struct {
		name    string
		signals int
		within  time.Duration
		want    string
	}{
		{"one interrupt", 1, 5 * time.Second, "vi: interrupted: still stopping after 4s: exiting without cleanup\n"},
		{"two interrupts", 2, 10 * time.Second, "vi: interrupted again: exiting without cleanup\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stderr := startViTraining(t, dir, "estimate", "--data", "hd.csv", "--backend-process", "--format", "json", "--out", filepath.Join(dir, "out.json"))
			child := waitChild(t, cmd.Process.Pid)
			if err := syscall.Kill(child, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if tc.signals == 2 {
				// vi takes an interrupt as a second one once it has
				// handled the first; one sent while the first is still
				// pending merges with it. So interrupt again until vi
				// exits.
				start = time.Now()
				defer repeatSignal(cmd.Process, os.Interrupt, 50*time.Millisecond)()
			}
			if !waitExit(cmd, 60*time.Second) {
				t.Fatalf("vi still running 60 s after the interrupt; stderr %q", stderr.String())
			}
			took := time.Since(start)
			if took > tc.within {
				t.Errorf("vi exited %v after the last interrupt, want within %v", took.Round(time.Millisecond), tc.within)
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.HasSuffix(afterBar(stderr.String()), tc.want) {
				t.Errorf("exit code %d, stderr %q; want 1 and %q", code, stderr.String(), tc.want)
			}
			deadline := time.Now().Add(5 * time.Second)
			for alive(child) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(child) {
				t.Errorf("backend process %d still there after vi exited", child)
			}
		})
	}
}

// repeatSignal sends sig to p every period until the returned function is
// called; errors (p has exited) are ignored.
func repeatSignal(p *os.Process, sig os.Signal, period time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = p.Signal(sig)
			}
		}
	}()
	return func() { close(done) }
}
