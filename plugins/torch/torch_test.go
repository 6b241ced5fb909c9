// Package torch_test checks lazyvi-torch, the PyTorch backend plugin in this
// directory, from lazyvi's side: the conformance kit against the real Python
// process, the plugin transport's additions (kept matrices, Gram, shift
// batches), a user's module and state dict, saved and loaded models, and
// the paper's linear setting.
//
// The tests need python3 with torch, functorch, grpcio, protobuf and numpy
// (Debian: apt-get install python3-torch python3-grpcio python3-protobuf).
// Without them they skip, saying why, unless CI=true, where they fail.
package torch_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
)

// startTimeout bounds the plugin's start-up (importing torch takes
// seconds, more on a loaded machine).
const startTimeout = 60 * time.Second

var (
	pythonOnce sync.Once
	pythonErr  error
)

// requirePython skips (fails under CI=true) when no python the tests
// would use has the packages the plugin needs.
func requirePython(t testing.TB) {
	t.Helper()
	pythonOnce.Do(func() {
		readSources()
		var errs []string
		for _, py := range pythons() {
			out, err := exec.Command(py, "-c", "import torch, functorch, grpc, google.protobuf, numpy").CombinedOutput()
			if err == nil {
				pythonErr = nil
				return
			}
			errs = append(errs, py+": "+lastLine(string(out), err))
		}
		pythonErr = &missingPython{strings.Join(errs, "; ")}
	})
	if pythonErr == nil {
		return
	}
	requireOrSkip(t, pythonErr.Error())
}

type missingPython struct{ why string }

func (e *missingPython) Error() string {
	return "lazyvi-torch needs python3 with torch, functorch, grpcio, protobuf and numpy (Debian: apt-get install python3-torch python3-grpcio python3-protobuf): " + e.why
}

// pythons are the interpreters the tests try, in this order: python3 on
// PATH, then $LAZYVI_TORCH_PYTHON or Debian's /usr/bin/python3 (where
// apt-get installs torch when the first python3 is a pyenv one, say).
func pythons() []string {
	out := []string{}
	if p, err := exec.LookPath("python3"); err == nil {
		out = append(out, p)
	}
	if p := os.Getenv("LAZYVI_TORCH_PYTHON"); p != "" {
		return append(out, p)
	}
	return append(out, "/usr/bin/python3")
}

// python returns the first interpreter with the packages, for the tests'
// own scripts.
func python(t testing.TB) string {
	t.Helper()
	requirePython(t)
	for _, py := range pythons() {
		if exec.Command(py, "-c", "import torch").Run() == nil {
			return py
		}
	}
	t.Fatal("no python with torch")
	return ""
}

func lastLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

// pluginEnv is the environment under which `python3 -m lazyvi_torch` runs
// this directory's plugin, installed or not: the directory first on
// PYTHONPATH.
func pluginEnv(t testing.TB) []string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(), "PYTHONPATH="+dir)
}

// pluginCmd is the command that runs the plugin: python3 -m lazyvi_torch
// (what the lazyvi-torch command runs) with this directory's sources.
func pluginCmd(t testing.TB) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(python(t), "-m", "lazyvi_torch")
	cmd.Env = pluginEnv(t)
	return cmd
}

// launcher writes the lazyvi-torch command as an installed package
// provides it (a script running python3 -m lazyvi_torch, here on this
// directory's sources) into a temporary directory of t's, for vi's
// --plugin, and returns its path.
func launcher(t testing.TB) string {
	t.Helper()
	cmd := pluginCmd(t)
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lazyvi-torch")
	script := fmt.Sprintf("#!/bin/sh\nPYTHONPATH=%q exec %q -m lazyvi_torch \"$@\"\n", dir, cmd.Path)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// requireOrSkip fails under CI=true and skips otherwise, saying why.
func requireOrSkip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// start starts the plugin with extra environment variables.
func start(t testing.TB, env ...string) *backendplugin.Client {
	t.Helper()
	cmd := pluginCmd(t)
	cmd.Env = append(cmd.Env, env...)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := backendplugin.Open(ctx, "lazyvi-torch", cmd)
	if err != nil {
		t.Fatalf("start the plugin: %v", err)
	}
	return c
}

// open starts a plugin process of the test's own, with extra environment
// variables, and returns its backend; the process ends with the test.
func open(t testing.TB, env ...string) framework.Backend {
	t.Helper()
	c := start(t, env...)
	t.Cleanup(func() { _ = c.Close() })
	return c.Backend()
}

// readSources reads the plugin's Python files, so that go test's cache,
// which records the files a test opens (once m.Run has started), reruns
// these tests when one changes (the plugin process reads them, out of the
// cache's sight).
func readSources() {
	for _, dir := range []string{".", "lazyvi_torch", "lazyvi_torch/pb", "tests", "testdata"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() {
				_, _ = os.ReadFile(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// shared is one plugin process for the tests that need no environment of
// their own (models are independent, and a start-up costs seconds), closed
// by TestMain.
var shared struct {
	mu sync.Mutex
	c  *backendplugin.Client
}

// sharedBackend returns the shared process's backend, starting it first.
func sharedBackend(t testing.TB) framework.Backend {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.c == nil {
		shared.c = start(t)
	}
	return shared.c.Backend()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.c != nil {
		_ = shared.c.Close()
	}
	os.Exit(code)
}

// abs returns the absolute path of a file under testdata.
func abs(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
