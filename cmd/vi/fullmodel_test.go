package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi"
)

// TestEstimateHiddenAuto: without --hidden the mlp's architecture is
// chosen among lazyvi.AutoHidden and the report says which, how training
// ended, and the baselines; --hidden auto on another backend is a usage
// error.
func TestEstimateHiddenAuto(t *testing.T) {
	dir := t.TempDir()
	// 1600 rows: a validation slice of 213 rows, enough to choose by.
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(1600))
	stdout, stderr, code := vi(t, dir, "estimate", "--data", "data.csv", "--target", "y", "--format", "json",
		"--estimators", "dropout", "--epochs", "40", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	var r struct {
		Full struct {
			Hidden     string   `json:"hidden"`
			Epochs     int      `json:"epochs"`
			StoppedBy  string   `json:"stopped_by"`
			R2         *float64 `json:"r2"`
			Candidates []struct {
				Name      string   `json:"name"`
				ValidLoss *float64 `json:"valid_loss"`
			} `json:"candidates"`
			Baselines []struct {
				Name   string  `json:"name"`
				Score  float64 `json:"score"`
				Gain   float64 `json:"gain"`
				GainSE float64 `json:"gain_se"`
			} `json:"baselines"`
		} `json:"full"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
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
	if len(f.Baselines) != 2 || f.Baselines[0].Name != "intercept" || f.Baselines[1].Name != "linear" {
		t.Fatalf("baselines %+v, want intercept and linear", f.Baselines)
	}
	// y is linear in x1, x2: the network does not beat the linear baseline,
	// and says so on stderr and in the report.
	if len(r.Warnings) == 0 || !strings.Contains(stderr, "vi: warning: the full model does not beat the linear baseline") {
		t.Errorf("no warning for a network no better than OLS on linear data: warnings %q, stderr:\n%s", r.Warnings, stderr)
	}

	// 300 rows: 40 validation rows, too few; the first candidate is kept
	// and the header says why.
	writeFile(t, filepath.Join(dir, "small.csv"), linearCSV(300))
	stdout, stderr, code = vi(t, dir, "estimate", "--data", "small.csv", "--target", "y", "--estimators", "dropout", "--epochs", "40")
	if code != 0 || !strings.Contains(stdout, "hidden 50 (auto: 40 validation rows are too few") {
		t.Errorf("small data: exit %d, want the first candidate and why in the header:\n%s%s", code, stdout, stderr)
	}

	_, stderr, code = vi(t, dir, "estimate", "--data", "data.csv", "--backend", "linear", "--hidden", "auto")
	if code != 2 || !strings.Contains(stderr, "--hidden auto") {
		t.Errorf("--hidden auto with the linear backend: exit %d, stderr %q; want 2 and a usage error", code, stderr)
	}
}
