package torch_test

import (
	"os/exec"
	"testing"
)

// TestPythonUnit runs the plugin's Python unit tests (tests/): the
// hand-written protobuf codec against the generated classes.
func TestPythonUnit(t *testing.T) {
	py := python(t)
	out, err := exec.Command(py, "-m", "unittest", "discover", "-s", "tests").CombinedOutput()
	if err != nil {
		t.Fatalf("python -m unittest: %v\n%s", err, out)
	}
}
