package backendplugin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// gcPercent returns the collector's current GOGC setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestLaunchInProcess: a built-in backend opens in this process (the
// registered backend itself) with the collector at BackendGCPercent while
// it is open and the previous setting restored when it is released.
func TestLaunchInProcess(t *testing.T) {
	t.Setenv("GOGC", "")
	want, err := framework.LookupBackend("launch-test-linear")
	if err != nil { // registered once, whatever -count says
		want = newLinear()
		framework.RegisterBackend("launch-test-linear", want)
	}
	before := gcPercent()
	be, release, err := Launch{Name: "launch-test-linear"}.Open(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if be != want {
		t.Errorf("built-in backend opened as %T, want the registered one", be)
	}
	if got := gcPercent(); got != BackendGCPercent {
		t.Errorf("GOGC while the backend is open: %d, want %d", got, BackendGCPercent)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after release: %d, want %d as before", got, before)
	}
	if _, _, err := (Launch{Name: "no-such-backend"}).Open(context.Background(), io.Discard); err == nil {
		t.Error("an unregistered backend opened")
	}
}

// TestLaunchAttachIncompatible: a handshake line of another format fails
// with ErrIncompatible.
func TestLaunchAttachIncompatible(t *testing.T) {
	_, _, err := Launch{Name: "x", Attach: "not a handshake"}.Open(context.Background(), io.Discard)
	if !errors.Is(err, ErrIncompatible) {
		t.Errorf("err %v, want ErrIncompatible", err)
	}
}

// TestFindPlugin: an executable file is found by its path (made absolute)
// and a missing file, a directory and a file that is not executable are
// usage errors naming the path.
func TestFindPlugin(t *testing.T) {
	dir := t.TempDir()
	exe, plain := filepath.Join(dir, "plugin"), filepath.Join(dir, "plain")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := FindPlugin(exe); err != nil || got != exe {
		t.Errorf("FindPlugin(%s) = %q, %v", exe, got, err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "none"):               "no such file",
		dir:                                      "is a directory",
		plain:                                    "not executable",
		"lazyvi-no-such-plugin-on-path-anywhere": "no executable of that name on PATH",
	} {
		_, err := FindPlugin(path)
		if !errors.Is(err, framework.ErrUsage) || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), want) {
			t.Errorf("FindPlugin(%s): %v, want a usage error %q", path, err, want)
		}
	}
}

// TestLogFilter: lines pass on whole, each after the before function,
// go-plugin's exit report is dropped, and Flush ends an incomplete line.
func TestLogFilter(t *testing.T) {
	var out bytes.Buffer
	calls := 0
	l := NewLogFilter(&out, func() { calls++ })
	io.WriteString(l, "one\ntw")
	io.WriteString(l, "o\n2026 [ERROR] plugin: plugin process exited: path=x\nthr")
	if got := out.String(); got != "one\ntwo\n" {
		t.Errorf("before Flush: %q", got)
	}
	l.Flush()
	if got := out.String(); got != "one\ntwo\nthr\n" || calls != 2 {
		t.Errorf("after Flush: %q with %d calls of before, want 3 lines and 2 calls", got, calls)
	}
}
