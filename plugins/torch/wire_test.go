package torch_test

import (
	"os/exec"
	"testing"
)

// TestPythonUnit runs the plugin's Python unit tests (tests/) with pytest.
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
