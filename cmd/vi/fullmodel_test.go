package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi"
)

// productCSV returns a regression data set whose response is mostly an
// interaction: y = 2 x1 x2 + x2 + noise, x3 irrelevant; no linear model
// comes close to a network on it.
func productCSV(n int) string {
	rng := rand.New(rand.NewPCG(7, 8))
	var b strings.Builder
	b.WriteString("x1,x2,x3,y\n")
	for range n {
		x1, x2, x3 := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,%.4f\n", x1, x2, x3, 2*x1*x2+x2+0.3*rng.NormFloat64())
	}
	return b.String()
}

// fullReport is the part of the JSON report on the full model.
type fullReport struct {
	Backend string `json:"backend"`
	Full    struct {
		Hidden     string   `json:"hidden"`
		Epochs     int      `json:"epochs"`
		StoppedBy  string   `json:"stopped_by"`
		R2         *float64 `json:"r2"`
		Candidates []struct {
			Name      string   `json:"name"`
			ValidLoss *float64 `json:"valid_loss"`
		} `json:"candidates"`
		Choice *struct {
			Chosen string `json:"chosen"`
			Kinds  []struct {
				Name   string  `json:"name"`
				Loss   float64 `json:"loss"`
				Diff   float64 `json:"diff"`
				DiffSE float64 `json:"diff_se"`
			} `json:"kinds"`
		} `json:"model_choice"`
		Baselines []struct {
			Name   string  `json:"name"`
			Score  float64 `json:"score"`
			Gain   float64 `json:"gain"`
			GainSE float64 `json:"gain_se"`
		} `json:"baselines"`
	} `json:"full"`
	Warnings []string `json:"warnings"`
}

// estimateJSON runs vi estimate --format json with args in dir and parses
// the report.
func estimateJSON(t *testing.T, dir string, args ...string) (fullReport, string) {
	t.Helper()
	stdout, stderr, code := vi(t, dir, append([]string{"estimate", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit code %d; stderr:\n%s", args, code, stderr)
	}
	var r fullReport
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return r, stderr
}

// TestEstimateHiddenAuto: without --hidden the mlp's architecture is
// chosen among lazyvi.AutoHidden, and the network against the linear
// model; the report says which, how training ended, and the baselines;
// --hidden auto on another backend is a usage error.
func TestEstimateHiddenAuto(t *testing.T) {
	dir := t.TempDir()
	// 1600 rows: a validation slice of 213 rows, enough to choose by.
	writeFile(t, filepath.Join(dir, "data.csv"), productCSV(1600))
	fast := []string{"--target", "y", "--estimators", "dropout", "--epochs", "40", "--workers", "2"}
	r, _ := estimateJSON(t, dir, append([]string{"--data", "data.csv"}, fast...)...)
	f := r.Full
	var names []string
	for _, c := range f.Candidates {
		names = append(names, c.Name)
		if c.ValidLoss == nil {
			t.Errorf("candidate %s has no validation loss", c.Name)
		}
	}
	if strings.Join(names, " ") != strings.Join(lazyvi.AutoHidden(), " ") || !strings.Contains(" "+strings.Join(names, " ")+" ", " "+f.Hidden+" ") {
		t.Errorf("hidden %q chosen among %q, want one of %q", f.Hidden, names, lazyvi.AutoHidden())
	}
	if f.Epochs < 1 || (f.StoppedBy != "patience" && f.StoppedBy != "cap") || f.R2 == nil {
		t.Errorf("full model: epochs %d, stopped by %q, r2 %v", f.Epochs, f.StoppedBy, f.R2)
	}
	if c := f.Choice; r.Backend != "mlp" || c == nil || c.Chosen != "mlp" || len(c.Kinds) != 2 || !(c.Kinds[1].Diff > c.Kinds[1].DiffSE) {
		t.Errorf("an interaction: backend %s, choice %+v; want the mlp, better than linear beyond the standard error", r.Backend, c)
	}
	if len(f.Baselines) != 2 || f.Baselines[0].Name != "intercept" || f.Baselines[1].Name != "linear" {
		t.Fatalf("baselines %+v, want intercept and linear", f.Baselines)
	}
	if strings.Contains(strings.Join(r.Warnings, "\n"), "baseline") {
		t.Errorf("warnings %q", r.Warnings)
	}

	// y is linear in x1, x2: the network does not beat the linear model,
	// which is the full model then, without a warning; an mlp asked for
	// (--hidden) is kept, with the warning on stderr and in the report.
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(1600))
	r, stderr := estimateJSON(t, dir, append([]string{"--data", "lin.csv"}, fast...)...)
	if c := r.Full.Choice; r.Backend != "linear" || c == nil || c.Chosen != "linear" || len(r.Warnings) != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("linear data: backend %s, choice %+v, warnings %q; want the linear model and no warning", r.Backend, c, r.Warnings)
	}
	r, stderr = estimateJSON(t, dir, append([]string{"--data", "lin.csv", "--hidden", "50"}, fast...)...)
	if r.Backend != "mlp" || r.Full.Choice != nil || len(r.Warnings) == 0 || !strings.Contains(stderr, "vi: warning: the full model does not beat the linear baseline") {
		t.Errorf("--hidden 50 on linear data: backend %s, warnings %q, stderr:\n%s; want the mlp and the warning", r.Backend, r.Warnings, stderr)
	}

	// 300 rows: 40 validation rows, too few; the first candidate is kept
	// and the header says why.
	writeFile(t, filepath.Join(dir, "small.csv"), productCSV(300))
	stdout, stderr, code := vi(t, dir, "estimate", "--data", "small.csv", "--target", "y", "--estimators", "dropout", "--epochs", "40")
	if code != 0 || !strings.Contains(stdout, "hidden 50 (auto: 40 validation rows are too few") || !strings.Contains(stdout, "model choice: mlp (hidden 50) with cross-validated mse") {
		t.Errorf("small data: exit %d, want the first candidate, the model choice and why in the header:\n%s%s", code, stdout, stderr)
	}

	_, stderr, code = vi(t, dir, "estimate", "--data", "data.csv", "--backend", "linear", "--hidden", "auto")
	if code != 2 || !strings.Contains(stderr, "--hidden auto") {
		t.Errorf("--hidden auto with the linear backend: exit %d, stderr %q; want 2 and a usage error", code, stderr)
	}
}
