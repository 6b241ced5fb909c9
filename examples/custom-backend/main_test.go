package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin/plugintest"
	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

// TestConformance runs lazyvi's conformance kit on the network, in this
// process and over the plugin transport: what every backend should do.
func TestConformance(t *testing.T) {
	opts := []frameworktest.Option{frameworktest.WithOptions(map[string]string{"epochs": "300"})}
	frameworktest.TestBackend(t, Backend{}, opts...)
	t.Run("Plugin", func(t *testing.T) { plugintest.TestBackend(t, Backend{}, opts...) })
}

// TestEndToEnd builds vi and this plugin and runs
// vi estimate --plugin ./tanhnet --estimators lazy,dropout on data where x1
// matters, x2 a little and x3 not at all.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	dir := t.TempDir()
	vi, plugin := filepath.Join(dir, "vi"), filepath.Join(dir, "tanhnet")
	for _, b := range []struct{ out, pkg string }{{vi, "../../cmd/vi"}, {plugin, "."}} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var csv strings.Builder
	csv.WriteString("x1,x2,x3,y\n")
	for range 400 {
		x1, x2, x3 := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		fmt.Fprintf(&csv, "%.5f,%.5f,%.5f,%.5f\n", x1, x2, x3, 2*x1+0.5*x2+0.2*rng.NormFloat64())
	}
	if err := os.WriteFile(filepath.Join(dir, "data.csv"), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(vi, "estimate", "--data", "data.csv", "--plugin", plugin,
		"--estimators", "lazy,dropout", "--format", "json", "--workers", "2", "--folds", "3")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("vi estimate --plugin: %v\n%s", err, stderr.String())
	}
	var rep struct {
		Backend string
		Results []struct {
			Feature, Estimator string
			VI, SE             float64
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout.String())
	}
	if rep.Backend != "tanhnet" || len(rep.Results) != 6 {
		t.Fatalf("backend %q with %d results, want tanhnet and 6:\n%s", rep.Backend, len(rep.Results), stdout.String())
	}
	vi1 := map[string]float64{}
	for _, r := range rep.Results {
		t.Logf("%s %s: %.4f (se %.4f)", r.Estimator, r.Feature, r.VI, r.SE)
		vi1[r.Estimator+"/"+r.Feature] = r.VI
	}
	// True VI: 4 for x1, 0.25 for x2, 0 for x3 (independent inputs).
	for _, e := range []string{"lazy", "dropout"} {
		if !(vi1[e+"/x1"] > 2.5 && vi1[e+"/x2"] > 0.1 && vi1[e+"/x2"] < 0.5 && vi1[e+"/x3"] < 0.05) {
			t.Errorf("%s: VI x1 %.3f x2 %.3f x3 %.3f, want about 4, 0.25 and 0", e, vi1[e+"/x1"], vi1[e+"/x2"], vi1[e+"/x3"])
		}
	}

	// Run by hand, the plugin says what it is and exits non-zero.
	out, err := exec.Command(plugin).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "plugin") {
		t.Errorf("run by hand: want an error mentioning plugin, got %v: %s", err, out)
	}
}
