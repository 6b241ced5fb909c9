package main

import (
	"strings"
	"testing"
)

// diabetesArgs run a command on vi's built-in copy of the diabetes data.
var diabetesArgs = []string{"--target", "target"}

// TestBaselineBackends runs the linear and forest backends through the CLI
// on the diabetes data and on simulated high-dimensional data: dropout and
// retrain results in the JSON contract, one per feature, and lazy on the
// linear backend; the forest, without gradients, runs retrain in the
// default lazy's place.
func TestBaselineBackends(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := vi(t, dir, "simulate", "--setting", "highdim", "--n", "300", "--out", "hd.csv"); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	cases := []struct {
		name     string
		args     []string
		features int
		ests     []string
	}{
		{"linear/diabetes", append([]string{"--backend", "linear", "--estimators", "dropout,retrain,lazy"}, diabetesArgs...), 10, []string{"dropout", "retrain", "lazy"}},
		{"forest/diabetes", append([]string{"--backend", "forest", "--opt", "trees=30"}, diabetesArgs...), 10, []string{"retrain", "dropout"}},
		{"linear/highdim", []string{"--backend", "linear", "--data", "hd.csv", "--estimators", "dropout,retrain"}, 100, []string{"dropout", "retrain"}},
		{"forest/highdim", []string{"--backend", "forest", "--data", "hd.csv", "--estimators", "dropout,retrain", "--opt", "trees=10", "--opt", "max_depth=6"}, 100, []string{"dropout", "retrain"}},
	}
	for _, tc := range cases {
		args := append([]string{"estimate", "--format", "json", "--workers", "2"}, tc.args...)
		stdout, stderr, code := vi(t, dir, args...)
		if code != 0 {
			t.Errorf("%s: exit code %d; stderr:\n%s", tc.name, code, stderr)
			continue
		}
		r := parseReport(t, []byte(stdout))
		backend := strings.Split(tc.name, "/")[0]
		if r.Backend != backend || r.Measure != "mse" {
			t.Errorf("%s: backend %q measure %q", tc.name, r.Backend, r.Measure)
		}
		if len(r.Results) != tc.features*len(tc.ests) {
			t.Errorf("%s: %d results, want %d", tc.name, len(r.Results), tc.features*len(tc.ests))
			continue
		}
		for i, e := range tc.ests {
			if got := r.Results[i*tc.features]["estimator"]; got != e {
				t.Errorf("%s: estimator %d is %v, want %s", tc.name, i, got, e)
			}
		}
		if backend == "forest" && !strings.Contains(tc.name, "highdim") && !strings.Contains(stderr, "no gradients: estimating with retrain, dropout (retrain in lazy's place") {
			t.Errorf("%s: the default estimators without lazy should be announced; stderr:\n%s", tc.name, stderr)
		}
	}
}

// TestLazyNeedsGradients: asking for lazy on the forest is a usage error
// naming the backend and the estimators it supports.
func TestLazyNeedsGradientsCLI(t *testing.T) {
	_, stderr, code := vi(t, t.TempDir(), "estimate", "--backend", "forest", "--estimators", "dropout,lazy")
	if code != 2 {
		t.Fatalf("exit code %d, want 2; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"lazy", "forest", "cpi,dropout,permute,retrain"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	stdout, _, code := vi(t, t.TempDir(), "backends")
	if code != 0 {
		t.Fatalf("vi backends: exit %d", code)
	}
	for _, want := range []string{"forest\n  capabilities: regression, binary, multiclass\n  estimators: cpi, dropout, permute, retrain", "linear\n", "ridge", "mtry", "min_leaf", "max_depth", "trees"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("vi backends lacks %q:\n%s", want, stdout)
		}
	}
}
