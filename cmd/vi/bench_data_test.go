package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// vi bench data times the estimators on a file (a seeded subsample of its
// rows, the first K features) and reports each one's agreement with
// retrain; it needs --data and retrain among the estimators. On
// y = 2 x1 + x2 + noise the top feature is x1 for every estimator.
func TestBenchData(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "lin.csv")
	writeFile(t, data, linearCSV(400))
	stdout, stderr, code := vi(t, dir, "bench", "data", "--data", data, "--target", "y", "--rows", "300", "--features", "2",
		"--estimators", "dropout,retrain", "--epochs", "20", "--format", "json")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	var rep struct {
		N         int    `json:"n"`
		Target    string `json:"target"`
		Results   []struct{ Features int }
		Agreement []struct {
			Estimator  string  `json:"estimator"`
			RankCorr   float64 `json:"rank_corr"`
			TopK       int     `json:"top_k"`
			TopOverlap float64 `json:"top_overlap"`
		} `json:"agreement"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v in:\n%s", err, stdout)
	}
	if rep.N != 300 || rep.Target != "y" || len(rep.Results) != 2 || rep.Results[0].Features != 2 || len(rep.Agreement) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if a := rep.Agreement[0]; a.Estimator != "dropout" || a.TopK != 1 || a.TopOverlap != 1 || a.RankCorr != 1 {
		t.Errorf("agreement %+v: want dropout, top 1 shared, ranks equal", a)
	}
	// Another backend: its name in the report, and the MLP's --hidden
	// default not passed to it (the linear backend has no such option).
	stdout, stderr, code = vi(t, dir, "bench", "data", "--data", data, "--target", "y", "--rows", "300", "--features", "2",
		"--backend", "linear", "--estimators", "lazy,dropout,retrain", "--format", "json")
	if code != 0 {
		t.Fatalf("--backend linear: exit code %d; stderr:\n%s", code, stderr)
	}
	var lin struct {
		Backend   string `json:"backend"`
		Width     string `json:"width"`
		Agreement []struct {
			Estimator string `json:"estimator"`
		} `json:"agreement"`
	}
	if err := json.Unmarshal([]byte(stdout), &lin); err != nil {
		t.Fatalf("%v in:\n%s", err, stdout)
	}
	if lin.Backend != "linear" || lin.Width != "" || len(lin.Agreement) != 2 {
		t.Errorf("--backend linear: report %+v, want backend linear, no width, lazy's and dropout's agreement", lin)
	}
	for _, args := range [][]string{{"bench", "data"}, {"bench", "data", "--data", data, "--estimators", "dropout"},
		{"bench", "data", "--data", data, "--backend", "nosuch"}, {"bench", "data", "--data", data, "--plugin", filepath.Join(dir, "missing")}} {
		if _, stderr, code := vi(t, dir, args...); code != 2 || !(strings.Contains(stderr, "bench data") || strings.Contains(stderr, "backend") || strings.Contains(stderr, "missing")) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
}

// ranks gives ties their mean rank.
func TestRanks(t *testing.T) {
	got := ranks([]float64{3, 1, 3, 2})
	want := []float64{3.5, 1, 3.5, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ranks: got %v, want %v", got, want)
		}
	}
}
