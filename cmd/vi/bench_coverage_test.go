package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/study/coverage"
)

// TestBenchCoverageSemi runs the semi-synthetic study for one repetition
// with a tiny network and checks the JSON contract: every candidate, the
// planted features with their truth, the real ones without, and the full
// model's kind chosen as vi estimate chooses it (the linear model, on a
// linear response), unless --choose=false.
func TestBenchCoverageSemi(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lin.csv"), []byte(linearCSV(120)), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := vi(t, dir, "bench", "coverage", "--setting", "semi", "--data", "lin.csv", "--reps", "1",
		"--crossfit", "2", "--repeats", "2", "--hidden", "4", "--folds", "2", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep coverage.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.Setting != "semi" || rep.N != 120 || rep.Measure != "mse" || rep.CrossFit != 2 || rep.Repeats != 2 {
		t.Errorf("header: %+v", rep)
	}
	if rep.Kinds["linear"] != 1 || len(rep.Kinds) != 1 {
		t.Errorf("full models chosen %v, want the linear model's 1", rep.Kinds)
	}
	names := rep.Candidates
	if len(names) < 2 || names[0] != "split" || !slices.Contains(names, "default") {
		t.Errorf("candidates %v: want split first and vi's default among them", names)
	}
	// 5 features (x1..x3, perm_x1, z) per candidate, lazy only.
	if len(rep.Rows) != 5*len(names) {
		t.Fatalf("%d rows, want %d", len(rep.Rows), 5*len(names))
	}
	for _, row := range rep.Rows {
		// vi's default is one procedure: no result's interval and test
		// disagree.
		if row.Candidate == "default" && row.Incoherent != 0 {
			t.Errorf("default, %s: %.2f of the results incoherent", row.Feature, row.Incoherent)
		}
		switch row.Feature {
		case "perm_x1", "z":
			if row.Truth == nil || row.Coverage == nil || (row.Feature == "perm_x1") != (*row.Truth == 0) {
				t.Errorf("%s %s: truth %v coverage %v", row.Candidate, row.Feature, row.Truth, row.Coverage)
			}
		default:
			if row.Truth != nil || row.Coverage != nil {
				t.Errorf("%s %s: a real feature has no known truth", row.Candidate, row.Feature)
			}
		}
	}
	stdout, stderr, code = vi(t, dir, "bench", "coverage", "--setting", "semi", "--data", "lin.csv", "--reps", "1",
		"--crossfit", "2", "--repeats", "2", "--hidden", "4", "--folds", "2", "--format", "json", "--choose=false")
	var mlpRep coverage.Report
	if err := json.Unmarshal([]byte(stdout), &mlpRep); code != 0 || err != nil || mlpRep.Kinds != nil {
		t.Errorf("--choose=false: exit %d (%s), %v, kinds %v; want none", code, stderr, err, mlpRep.Kinds)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--setting", "bogus"}, "--setting"},
		{[]string{"--setting", "semi", "--n", "100"}, "--n"},
		{[]string{"--setting", "linear", "--data", "lin.csv"}, "--data"},
		{[]string{"--setting", "linear", "--copy", "0.9"}, "--copy"},
		{[]string{"--setting", "semi", "--signal", "0"}, "--signal"},
		{[]string{"--perturb", "0"}, "--perturb"},
		{[]string{"--crossfit", "1"}, "--crossfit"},
		{[]string{"--setting", "semi", "--data", "missing.csv"}, "missing.csv"},
	} {
		_, stderr, code := vi(t, dir, append([]string{"bench", "coverage"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: want exit 2 naming %q, got %d: %s", c.args, c.want, code, stderr)
		}
	}
}
