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
	"sync"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pyfind"
)

// startTimeout bounds the plugin's start-up (importing torch takes
// seconds, more on a loaded machine).
const startTimeout = 60 * time.Second

var (
	pythonOnce sync.Once
	pythonBin  string
	pythonErr  error
)

// requirePython skips (fails under CI=true) when no python the tests
// would use (pyfind.Candidates) has the packages the plugin needs.
func requirePython(t testing.TB) {
	t.Helper()
	pythonOnce.Do(func() {
		readSources()
		var err error
		if pythonBin, err = pyfind.Find("torch, functorch, grpc, google.protobuf, numpy"); err != nil {
			pythonErr = &missingPython{err.Error()}
		}
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

// python returns the first interpreter with the packages, for the tests'
// own scripts.
func python(t testing.TB) string {
	t.Helper()
	requirePython(t)
	return pythonBin
}

// pythonPath is the PYTHONPATH under which `python3 -m lazyvi_torch` runs
// this directory's plugin, installed or not: the directory, then the
// plugin kit's (../python).
func pythonPath(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return dir + string(filepath.ListSeparator) + filepath.Join(filepath.Dir(dir), "python")
}

// pluginEnv is the environment under which `python3 -m lazyvi_torch` runs
// this directory's plugin: pythonPath's.
func pluginEnv(t testing.TB) []string {
	t.Helper()
	return append(os.Environ(), "PYTHONPATH="+pythonPath(t))
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
	path := filepath.Join(t.TempDir(), "lazyvi-torch")
	script := fmt.Sprintf("#!/bin/sh\nPYTHONPATH=%q exec %q -m lazyvi_torch \"$@\"\n", pythonPath(t), cmd.Path)
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
	for _, dir := range []string{".", "lazyvi_torch", "tests", "testdata", "../python/lazyvi_plugin", "../python/lazyvi_plugin/pb"} {
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
