package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestInterruptAndBackendDeath starts a run long enough to be caught in the
// middle, then either interrupts vi (SIGINT) or kills its backend process.
// Either way vi exits 1 with a one-line error, writes no output file, and
// leaves no backend process running.
func TestInterruptAndBackendDeath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the backend process through /proc")
	}
	t.Parallel()
	dir := t.TempDir()
	if _, stderr, code := viExec(t, dir, "simulate", "--setting", "highdim", "--n", "3000", "--out", "hd.csv"); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	for _, tc := range []struct {
		name string
		act  func(vi, backend *os.Process) error
		want string
	}{
		{"SIGINT", func(vi, _ *os.Process) error { return vi.Signal(os.Interrupt) }, "interrupted"},
		{"backend killed", func(_, backend *os.Process) error {
			// Signal the pid directly (a pidfd-based Kill reports "already
			// finished" for a process that is exiting); a backend that is
			// already gone means the test did not kill it.
			if err := syscall.Kill(backend.Pid, syscall.SIGKILL); err != nil {
				return fmt.Errorf("kill backend %d: %w", backend.Pid, err)
			}
			return nil
		}, `backend "mlp"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".json")
			// Whatever happens below, leave no vi or backend running.
			cmd, stderr := startViTraining(t, dir, "estimate", "--data", "hd.csv", "--backend-process", "--format", "json", "--out", out)
			child := waitChild(t, cmd.Process.Pid)
			backend, _ := os.FindProcess(child)
			if err := tc.act(cmd.Process, backend); err != nil {
				t.Fatal(err)
			}
			if !waitExit(cmd, 90*time.Second) {
				t.Fatalf("vi still running 90 s after the %s (backend %d alive: %t); stderr:\n%s", tc.name, child, alive(child), stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr.String())
			}
			msg := afterBar(stderr.String())
			if !strings.HasPrefix(msg, "vi: ") || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) {
				t.Errorf("stderr %q: want one line \"vi: ...\" mentioning %q", msg, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("output file written")
			}
			if alive(child) {
				t.Errorf("backend process %d still running", child)
			}
		})
	}
}

// startViTraining starts vi with args and a progress bar on stderr (drawn
// whatever stderr is), and returns once the bar says that the full model
// is training. afterBar(stderr.String()) is what vi wrote after it.
func startViTraining(t *testing.T, dir string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd, stderr := startVi(t, dir, append(args, "--progress", "bar")...)
	waitFor(t, stderr, "training the full model")
	return cmd, stderr
}

// syncBuffer is a bytes.Buffer that vi's output may be written to while a
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until b holds want, for at most 30 s.
func waitFor(t *testing.T, b *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", want, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// afterBar is s after the last clearing of the progress bar's line: the
// lines vi wrote once the bar was gone.
func afterBar(s string) string {
	const clear = "\r\033[K"
	if i := strings.LastIndex(s, clear); i >= 0 {
		return s[i+len(clear):]
	}
	return s
}

// waitChild returns the pid of the first child process of pid once it runs
// the backend server (a child seen between fork and exec is still a copy of
// vi).
func waitChild(t *testing.T, pid int) int {
	t.Helper()
	return waitChildRunning(t, pid, serveBackendArg)
}

// waitChildRunning returns the pid of the first child process of pid whose
// command line contains marker; the test kills it at its end.
func waitChildRunning(t *testing.T, pid int, marker string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		// Any thread of vi may have started it.
		files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		for _, file := range files {
			b, _ := os.ReadFile(file)
			if f := strings.Fields(string(b)); len(f) > 0 {
				c, err := strconv.Atoi(f[0])
				cl, _ := os.ReadFile("/proc/" + f[0] + "/cmdline")
				if err == nil && bytes.Contains(cl, []byte(marker)) {
					// Killed at the end of the test, whatever happens.
					t.Cleanup(func() { _ = syscall.Kill(c, syscall.SIGKILL) })
					return c
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("vi started no process running %q", marker)
	return 0
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return syscall.Kill(pid, 0) == nil
}

// TestInterruptInProcess: an interrupt ends a run whose built-in backend
// runs in vi's own process (the default) with exit code 1, one line, and
// no output file.
func TestInterruptInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, stderr, code := viExec(t, dir, "simulate", "--setting", "highdim", "--n", "3000", "--out", "hd.csv"); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	out := filepath.Join(dir, "out.json")
	cmd, stderr := startViTraining(t, dir, "estimate", "--data", "hd.csv", "--format", "json", "--out", out)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if !waitExit(cmd, 30*time.Second) {
		t.Fatalf("vi still running 30 s after SIGINT; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, stderr.String())
	}
	if msg := afterBar(stderr.String()); msg != "vi: interrupted\n" {
		t.Errorf("stderr %q, want \"vi: interrupted\\n\"", msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output file written")
	}
}

// TestInterruptBenchAndExperiment: a signal during vi bench or vi
// experiment, deep in a fit, or vi simulate drawing 10 million rows, ends
// it with exit code 1 and the one line "vi: interrupted", as it ends vi
// estimate, and leaves no file of simulate's behind.
func TestInterruptBenchAndExperiment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the process's CPU time from /proc")
	}
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bench", "highdim", "--n", "3000", "--features", "2"},
		{"experiment", "highdim", "--out", filepath.Join(dir, "exp")},
		{"simulate", "--n", "10000000", "--out", "big.csv"},
	} {
		cmd, stderr := startVi(t, dir, args...)
		waitCPU(t, cmd.Process.Pid, 0.3)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if !waitExit(cmd, 10*time.Second) {
			t.Fatalf("%v: still running 10 s after SIGTERM; stderr:\n%s", args, stderr.String())
		}
		if code, msg := cmd.ProcessState.ExitCode(), stderr.String(); code != 1 || msg != "vi: interrupted\n" {
			t.Errorf("%v: exit %d, stderr %q; want 1 and \"vi: interrupted\\n\"", args, code, msg)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*big*")); len(left) > 0 {
		t.Errorf("interrupted simulate left %v", left)
	}
}

// waitCPU waits until process pid has used secs of CPU time (user and
// system, from /proc), the marker that it is computing, for at most 60 s.
func waitCPU(t *testing.T, pid int, secs float64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			// Fields after the command: state is the 3rd field of stat,
			// utime and stime the 14th and 15th.
			f := strings.Fields(s[i+1:])
			if len(f) > 12 {
				u, _ := strconv.ParseFloat(f[11], 64)
				k, _ := strconv.ParseFloat(f[12], 64)
				if (u+k)/100 >= secs {
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d used under %g s of CPU in 60 s", pid, secs)
}
