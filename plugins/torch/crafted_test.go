package torch_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// zeroBackend's models predict 0 and save an empty state: what makes a
// genuine model file in this process.
type zeroBackend struct{}

func (zeroBackend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Persist: true}
}
func (zeroBackend) Options() []framework.OptionInfo { return nil }
func (zeroBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return zeroModel{}, nil
}

type zeroModel struct{}

func (zeroModel) Fit(context.Context, mat.Matrix, []float64) error { return nil }
func (zeroModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	r, _ := x.Dims()
	return mat.NewDense(r, 1, nil), nil
}
func (zeroModel) SaveState(context.Context) ([]byte, error) { return []byte{}, nil }
func (zeroModel) LoadState(context.Context, []byte) error   { return nil }

// viBinary builds vi into dir.
func viBinary(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "vi")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/lazyvi/lazyvi/cmd/vi").CombinedOutput(); err != nil {
		t.Fatalf("go build vi: %v\n%s", err, out)
	}
	return bin
}

// viRun runs the vi binary in dir and returns its stderr and exit code.
func viRun(t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stderr.String(), 0
	case errors.As(err, &ee):
		return stderr.String(), ee.ExitCode()
	}
	t.Fatalf("vi %s: %v", strings.Join(args, " "), err)
	return "", 0
}

// evilModule writes a module= file that creates marker when imported.
func evilModule(t *testing.T, path, marker string) {
	t.Helper()
	src := "open(" + pyString(marker) + ", 'w').write('ran')\n\n" +
		"import torch\n\ndef build(n_inputs, n_outputs):\n    return torch.nn.Linear(n_inputs, n_outputs)\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pyString quotes s for Python source (the paths here have no quotes).
func pyString(s string) string { return "'" + s + "'" }

func checkNotRun(t *testing.T, marker, what string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("%s: the crafted file's code ran (%s exists)", what, marker)
	}
}

// craftedSetup returns a directory with a vi binary and the linear
// setting's data (200 rows) in lin.csv, and the marker file's name that
// the crafted files' code would create.
func craftedSetup(t *testing.T) (dir, bin string, d *dataio.Dataset, dataCSV, marker string) {
	t.Helper()
	dir = t.TempDir()
	bin = viBinary(t, dir)
	d, _ = linear(t, 200, 1)
	dataCSV = filepath.Join(dir, "lin.csv")
	writeCSV(t, dataCSV, d.Names, d.X)
	return dir, bin, d, dataCSV, filepath.Join(dir, "ran")
}

// TestCraftedModelFile: a model file of the right data, naming this plugin
// and carrying module=evil.py in its options (its checksum recomputed, as
// anyone can), imports nothing: the plugin's options are taken from the
// command line only.
func TestCraftedModelFile(t *testing.T) {
	requirePython(t)
	dir, bin, d, dataCSV, marker := craftedSetup(t)
	evil := filepath.Join(dir, "evil.py")
	evilModule(t, evil, marker)

	// A genuine model file of the data (its split's standardisation
	// right), then its backend and options rewritten.
	cfg := pipeline.Config{Backend: zeroBackend{}, BackendName: "zero", Seed: 1}
	saved, err := pipeline.TrainModel(context.Background(), d, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]string{"module": evil}
	saved.Protocol, saved.Backend, saved.Options, saved.Folds[0].Options = backendplugin.ProtocolVersion, "lazyvi-torch", opts, opts
	var buf bytes.Buffer
	if err := dataio.WriteModel(&buf, saved); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "torch.vimodel")
	if err := os.WriteFile(model, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		extra []string
		want  string
	}{
		{"options from the file", nil, "taken from the command line only"},
	} {
		args := append([]string{"estimate", "--data", dataCSV, "--model", model, "--plugin", launcher(t), "--plugin-timeout", startTimeout.String(), "--seed", "1"}, c.extra...)
		stderr, code := viRun(t, bin, dir, args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", c.name, code, stderr, c.want)
		}
		checkNotRun(t, marker, c.name)
		os.Remove(marker)
	}
}

// TestCraftedWeights: a .pt whose pickle would call open() on loading
// (what torch.load unpickles without weights_only) is refused as a usage
// error, and runs nothing.
func TestCraftedWeights(t *testing.T) {
	py := python(t)
	dir, bin, _, dataCSV, marker := craftedSetup(t)
	pt := filepath.Join(dir, "evil.pt")
	script := "import sys, torch\n" +
		"class Evil:\n    def __reduce__(self):\n        return (open, (sys.argv[2], 'w'))\n" +
		"torch.save({'0.weight': Evil()}, sys.argv[1])\n"
	if out, err := exec.Command(py, "-c", script, pt, marker).CombinedOutput(); err != nil {
		t.Fatalf("write the crafted .pt: %v\n%s", err, out)
	}
	checkNotRun(t, marker, "writing the .pt")
	stderr, code := viRun(t, bin, dir, "estimate", "--data", dataCSV, "--plugin", launcher(t), "--plugin-timeout", startTimeout.String(),
		"--opt", "module="+abs(t, "tanh.py"), "--opt", "weights="+pt, "--trained-elsewhere", "--estimators", "lazy", "--seed", "1")
	if code != 2 || !strings.Contains(stderr, "option weights: "+pt+": refused: the file holds more than tensors") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line refusing option weights", code, stderr)
	}
	checkNotRun(t, marker, "loading the .pt")
}
