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
	// benchJSON runs vi bench data on the first 2 features of 300 of the
	// rows with args and decodes its JSON report into rep.
	benchJSON := func(rep any, args ...string) {
		t.Helper()
		args = append([]string{"bench", "data", "--data", data, "--target", "y", "--rows", "300", "--features", "2", "--format", "json"}, args...)
		stdout, stderr, code := vi(t, dir, args...)
		if code != 0 {
			t.Fatalf("%v: exit code %d; stderr:\n%s", args, code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), rep); err != nil {
			t.Fatalf("%v in:\n%s", err, stdout)
		}
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
	benchJSON(&rep, "--estimators", "dropout,retrain", "--epochs", "20")
	if rep.N != 300 || rep.Target != "y" || len(rep.Results) != 2 || rep.Results[0].Features != 2 || len(rep.Agreement) != 1 {
		t.Fatalf("report %+v", rep)
	}
	if a := rep.Agreement[0]; a.Estimator != "dropout" || a.TopK != 1 || a.TopOverlap != 1 || a.RankCorr != 1 {
		t.Errorf("agreement %+v: want dropout, top 1 shared, ranks equal", a)
	}
	// Another backend: its name in the report, and the MLP's --hidden
	// default not passed to it (the linear backend has no such option).
	var lin struct {
		Backend   string `json:"backend"`
		Width     string `json:"width"`
		Agreement []struct {
			Estimator string `json:"estimator"`
		} `json:"agreement"`
	}
	benchJSON(&lin, "--backend", "linear", "--estimators", "lazy,dropout,retrain")
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
