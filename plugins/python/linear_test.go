package python_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// viBinary builds vi into dir.
func viBinary(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "vi")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/lazyvi/lazyvi/cmd/vi").CombinedOutput(); err != nil {
		t.Fatalf("go build vi: %v\n%s", err, out)
	}
	return bin
}

// vi runs the vi binary in dir and returns its stdout; it fails the test
// when vi fails.
func vi(t testing.TB, bin, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vi %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

type result struct {
	Feature, Estimator string
	VI, SE             float64
}

// estimates runs vi estimate with args and returns its results by
// estimator and feature.
func estimates(t testing.TB, bin, dir string, args ...string) map[[2]string]result {
	t.Helper()
	var rep struct{ Results []result }
	out := vi(t, bin, dir, append([]string{"estimate", "--format", "json"}, args...)...)
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("vi estimate's JSON: %v\n%s", err, out)
	}
	res := map[[2]string]result{}
	for _, r := range rep.Results {
		res[[2]string{r.Estimator, r.Feature}] = r
	}
	return res
}

// The example backend through vi, at the same ridge penalty as the Go
// linear backend, on the linear setting (three null features):
//
//	vi simulate --setting linear --n 1000 --out lin.csv
//	vi estimate --data lin.csv --backend linear --opt ridge=1 --estimators lazy,dropout,retrain
//	vi estimate --data lin.csv --plugin numpy-linear --opt ridge=1 --estimators lazy,dropout,retrain
//
// dropout and retrain fit and predict the same models, so their VIs agree
// within 1e-6; lazy's within 0.1 se (its Krylov solves see the plugin's
// Jacobians through another transport and summation order).
func TestSameAsLinearBackend(t *testing.T) {
	plugin := launcher(t)
	dir := t.TempDir()
	bin := viBinary(t, dir)
	vi(t, bin, dir, "simulate", "--setting", "linear", "--n", "1000", "--seed", "3", "--out", "lin.csv")
	common := []string{"--data", "lin.csv", "--opt", "ridge=1", "--estimators", "lazy,dropout,retrain", "--seed", "1"}
	goRes := estimates(t, bin, dir, append(common, "--backend", "linear")...)
	pyRes := estimates(t, bin, dir, append(common, "--plugin", plugin, "--plugin-timeout", startTimeout.String())...)
	if len(goRes) != 18 || len(pyRes) != 18 {
		t.Fatalf("%d and %d results, want 18 each", len(goRes), len(pyRes))
	}
	keys := slices.SortedFunc(maps.Keys(goRes), func(a, b [2]string) int { return strings.Compare(a[0]+a[1], b[0]+b[1]) })
	for _, k := range keys {
		g := goRes[k]
		p, ok := pyRes[k]
		if !ok {
			t.Errorf("%s %s: no result from the plugin", k[0], k[1])
			continue
		}
		tol := 1e-6
		if k[0] == "lazy" {
			tol = 0.1 * g.SE
		}
		t.Logf("%-8s %s linear %.9g numpy-linear %.9g (se %.3g)", k[0], k[1], g.VI, p.VI, g.SE)
		if d := math.Abs(g.VI - p.VI); !(d <= tol) {
			t.Errorf("%s %s: vi %.9g from numpy-linear, %.9g from linear: differ by %.3g, want within %.3g", k[0], k[1], p.VI, g.VI, d, tol)
		}
	}
}
