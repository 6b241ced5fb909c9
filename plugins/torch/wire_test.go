package torch_test

import (
	"os"
	"os/exec"
	"testing"
)

// TestPythonUnit runs the plugin's Python unit tests (tests/) with pytest,
// importance()'s through a vi built from this checkout ($LAZYVI_VI).
func TestPythonUnit(t *testing.T) {
	py := python(t)
	if exec.Command(py, "-c", "import pytest").Run() != nil {
		requireOrSkip(t, py+" has no pytest (Debian: apt-get install python3-pytest)")
	}
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider")
	cmd.Env = append(os.Environ(), "LAZYVI_VI="+viBinary(t, t.TempDir()))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pytest: %v\n%s", err, out)
	}
}
