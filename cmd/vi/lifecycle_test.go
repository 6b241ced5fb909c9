package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
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

// TestBackendDiesWithVi: vi killed with SIGKILL (no chance to stop its
// backend) takes the backend process with it: a built-in backend (vi
// re-executed) and an external plugin that knows nothing of vi (a shell
// script, here one that never answers).
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
		{"built-in", []string{"estimate", "--format", "json"}, serveBackendArg},
		{"--plugin", []string{"estimate", "--plugin", silentPlugin(t, dir), "--plugin-timeout", "5m"}, "sleep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(viBin, tc.args...)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			child := waitChildRunning(t, cmd.Process.Pid, tc.marker)
			t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
			if !alive(child) {
				t.Fatalf("backend %d gone before vi was killed; vi's stderr: %s", child, stderr.String())
			}
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(10 * time.Second)
			for alive(child) {
				if time.Now().After(deadline) {
					t.Fatalf("backend process %d still running 10 s after vi was killed", child)
				}
				time.Sleep(20 * time.Millisecond)
			}
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
	cmd := exec.Command(viBin, "estimate", "--data", "data.csv", "--plugin", plugin, "--plugin-timeout", "1500ms")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	child := waitChildRunning(t, cmd.Process.Pid, "sleep")
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	err := cmd.Wait()
	msg := stderr.String()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", code, msg)
	}
	for _, want := range []string{"vi: --plugin " + plugin + `: backend "silent-plugin": start:`, "no handshake within 1.5s", "--plugin-timeout"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q: want it to contain %q", msg, want)
		}
	}
	if strings.Count(msg, "\n") != 1 {
		t.Errorf("stderr %q: want one line", msg)
	}
	if alive(child) {
		t.Errorf("plugin process %d still running after vi gave up on it", child)
	}

	for _, bad := range []string{"0s", "-1s", "ten"} {
		if _, errs, code := vi(t, dir, "estimate", "--data", "data.csv", "--plugin-timeout", bad); code != 2 || !strings.Contains(errs, "plugin-timeout") {
			t.Errorf("--plugin-timeout %s: exit %d, stderr %q; want 2 naming the flag", bad, code, errs)
		}
	}
}
