// Package python_test checks lazyvi-plugin, the kit for backend plugins in
// Python in this directory, from lazyvi's side: its unit tests (pytest),
// and its example backend examples/numpy_linear.py against the conformance
// kit through the real plugin process and against lazyvi's own linear
// backend through vi.
//
// The tests need python3 with numpy, grpcio and protobuf (Debian: apt-get
// install python3-numpy python3-grpcio python3-protobuf). Without them they
// skip, saying why, unless CI=true, where they fail.
package python_test

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
	"github.com/lazyvi/lazyvi/internal/pyfind"
)

// startTimeout bounds the plugin's start-up.
const startTimeout = 60 * time.Second

// modules are what the kit and its example import.
const modules = "numpy, grpc, google.protobuf"

var (
	pythonOnce sync.Once
	pythonPath string
	pythonErr  error
)

// python returns the first interpreter with the kit's packages
// (pyfind.Find); it skips (fails under CI=true) when there is none.
func python(t testing.TB) string {
	t.Helper()
	pythonOnce.Do(func() {
		readSources()
		var err error
		if pythonPath, err = pyfind.Find(modules); err != nil {
			pythonErr = fmt.Errorf("lazyvi-plugin needs python3 with numpy, grpcio and protobuf "+
				"(Debian: apt-get install python3-numpy python3-grpcio python3-protobuf): %w", err)
		}
	})
	if pythonErr != nil {
		requireOrSkip(t, pythonErr.Error())
	}
	return pythonPath
}

// requireOrSkip fails under CI=true and skips otherwise, saying why.
func requireOrSkip(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// here is this directory, absolute: the kit's import path.
func here(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// example is the path of the example backend.
func example(t testing.TB) string {
	return filepath.Join(here(t), "examples", "numpy_linear.py")
}

// launcher writes a command that runs the example backend with this
// directory's kit (what an installed plugin's script does) into a
// temporary directory of t's, for vi's --plugin, and returns its path.
func launcher(t testing.TB) string {
	t.Helper()
	py := python(t)
	path := filepath.Join(t.TempDir(), "numpy-linear")
	script := fmt.Sprintf("#!/bin/sh\nPYTHONPATH=%q exec %q %q \"$@\"\n", here(t), py, example(t))
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// start starts the example backend's plugin process.
func start(t testing.TB) *backendplugin.Client {
	t.Helper()
	cmd := exec.Command(python(t), example(t))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+here(t))
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	c, err := backendplugin.Open(ctx, "numpy-linear", cmd)
	if err != nil {
		t.Fatalf("start the plugin: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readSources reads the kit's Python files, so that go test's cache,
// which records the files a test opens, reruns these tests when one
// changes (the plugin process reads them, out of the cache's sight).
func readSources() {
	for _, dir := range []string{".", "lazyvi_plugin", "lazyvi_plugin/pb", "examples", "tests"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() {
				_, _ = os.ReadFile(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// TestPythonUnit runs the kit's Python unit tests (tests/) with pytest.
func TestPythonUnit(t *testing.T) {
	py := python(t)
	if exec.Command(py, "-c", "import pytest").Run() != nil {
		requireOrSkip(t, py+" has no pytest (Debian: apt-get install python3-pytest)")
	}
	out, err := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider").CombinedOutput()
	if err != nil {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
}
