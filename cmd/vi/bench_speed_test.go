package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// vi bench <case> --format json keeps its contract ({case, n, p, width,
// results: [{estimator, features, seconds_total,
// seconds_per_feature_median, error_mean}]}), and --epochs caps the MLP's
// training (reported back) or is refused when negative.
func TestBenchSpeedJSON(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := vi(t, dir, "bench", "linear", "--n", "300", "--estimators", "dropout,retrain", "--epochs", "3", "--format", "json")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	var run struct {
		Case    string `json:"case"`
		N, P    int
		Width   string `json:"width"`
		Epochs  int    `json:"epochs"`
		Results []struct {
			Estimator string   `json:"estimator"`
			Features  int      `json:"features"`
			Total     float64  `json:"seconds_total"`
			Median    float64  `json:"seconds_per_feature_median"`
			Error     *float64 `json:"error_mean"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &run); err != nil {
		t.Fatalf("%v in:\n%s", err, stdout)
	}
	if run.Case != "linear" || run.N != 300 || run.P != 6 || run.Width != "50" || run.Epochs != 3 || len(run.Results) != 2 {
		t.Fatalf("header %+v", run)
	}
	for _, r := range run.Results {
		if r.Features != 6 || !(r.Total > 0) || !(r.Median > 0) || r.Error == nil {
			t.Errorf("result %+v", r)
		}
	}
	_, stderr, code = vi(t, dir, "bench", "linear", "--epochs", "-1")
	if code != 2 || !strings.Contains(stderr, "--epochs") {
		t.Errorf("--epochs -1: exit %d, stderr %q; want 2 naming --epochs", code, stderr)
	}
}
