package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// silentPlugin writes an executable that never completes the plugin
// handshake and is not written in Go: a shell that becomes "sleep".
func silentPlugin(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "silent-plugin")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitGone fails the test unless process pid is gone within 10 s (it is
// being killed: the signal lands a moment later).
func waitGone(t *testing.T, pid int, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("backend process %d still running 10 s after %s", pid, after)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBackendDiesWithVi: vi killed with SIGKILL (no chance to stop its
// backend) takes the backend process with it: a built-in backend served
// from a subprocess (vi re-executed, --backend-process) and an external
// plugin that knows nothing of vi (a shell script, here one that never
// answers).
func TestBackendDiesWithVi(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the backend process through /proc")
	}
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		marker string // in the backend process's command line
	}{
		{"built-in", []string{"estimate", "--backend-process", "--format", "json"}, serveBackendArg},
		{"--plugin", []string{"estimate", "--plugin", silentPlugin(t, dir), "--plugin-timeout", "5m"}, "sleep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stderr := startVi(t, dir, tc.args...)
			child := waitChildRunning(t, cmd.Process.Pid, tc.marker)
			if !alive(child) {
				t.Fatalf("backend %d gone before vi was killed; vi's stderr: %s", child, stderr.String())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			waitGone(t, child, "vi was killed")
		})
	}
}

// TestPluginTimeout: a plugin that never completes the handshake is given
// up on after --plugin-timeout with one line naming it and the flag, and
// its process does not stay behind; a timeout that is not positive is a
// usage error.
func TestPluginTimeout(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the plugin process through /proc")
	}
	t.Parallel()
	dir := t.TempDir()
	plugin := silentPlugin(t, dir)
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(40))
	cmd, stderr := startVi(t, dir, "estimate", "--data", "data.csv", "--plugin", plugin, "--plugin-timeout", "3s")
	child := waitChildRunning(t, cmd.Process.Pid, "sleep")
	err := cmd.Wait()
	msg := stderr.String()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, msg)
	}
	for _, want := range []string{"vi: --plugin " + plugin + `: backend "silent-plugin": start:`, "no handshake within 3s", "--plugin-timeout"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q: want it to contain %q", msg, want)
		}
	}
	if strings.Count(msg, "\n") != 1 {
		t.Errorf("stderr %q: want one line", msg)
	}
	waitGone(t, child, "vi gave up on it")

	for _, bad := range []string{"0s", "-1s", "ten"} {
		if _, errs, code := viExec(t, dir, "estimate", "--data", "data.csv", "--plugin-timeout", bad); code != 2 || !strings.Contains(errs, "plugin-timeout") {
			t.Errorf("--plugin-timeout %s: exit %d, stderr %q; want 2 naming the flag", bad, code, errs)
		}
	}
}

// TestInterruptDuringStart: SIGINT while the backend has not yet completed
// the handshake reads "interrupted" like an interrupt at any later point,
// and the backend process is stopped.
func TestInterruptDuringStart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds the plugin process through /proc")
	}
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(40))
	cmd, stderr := startVi(t, dir, "estimate", "--data", "data.csv", "--plugin", silentPlugin(t, dir), "--plugin-timeout", "5m")
	child := waitChildRunning(t, cmd.Process.Pid, "sleep")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || stderr.String() != "vi: interrupted\n" {
		t.Errorf("exit code %d, stderr %q; want 1 and \"vi: interrupted\"", code, stderr.String())
	}
	waitGone(t, child, "vi was interrupted")
}

// TestPluginOnPath: --plugin with a bare name that is no file here runs
// the executable of that name on PATH; $LAZYVI_PLUGIN_TIMEOUT sets the
// handshake's timeout when --plugin-timeout is not given (and must be a
// positive duration); a name on neither is refused naming both.
func TestPluginOnPath(t *testing.T) {
	dir := t.TempDir()
	bin := t.TempDir()
	plugin := silentPlugin(t, bin)
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(40))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("LAZYVI_PLUGIN_TIMEOUT", "2s")
	_, stderr, code := vi(t, dir, "estimate", "--data", "data.csv", "--plugin", "silent-plugin")
	if code != 1 || !strings.Contains(stderr, "--plugin "+plugin+`: backend "silent-plugin": start:`) || !strings.Contains(stderr, "no handshake within 2s") {
		t.Errorf("a plugin on PATH, timeout from the environment: exit %d, stderr %q", code, stderr)
	}
	t.Setenv("LAZYVI_PLUGIN_TIMEOUT", "soon")
	if _, stderr, code := vi(t, dir, "estimate", "--data", "data.csv", "--plugin", "silent-plugin"); code != 2 || !strings.Contains(stderr, `$LAZYVI_PLUGIN_TIMEOUT must be a positive duration such as 2m or 90s, got "soon"`) {
		t.Errorf("a bad $LAZYVI_PLUGIN_TIMEOUT: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := vi(t, dir, "estimate", "--data", "data.csv", "--plugin", "no-such-plugin-anywhere"); code != 2 || !strings.Contains(stderr, "--plugin no-such-plugin-anywhere: no such file here, and no executable of that name on PATH") {
		t.Errorf("a name on neither: exit %d, stderr %q", code, stderr)
	}
}
