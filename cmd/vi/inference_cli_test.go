package main

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/study/coverage"
)

func TestEstimateInferenceFlags(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--inference", "bogus"}, "--inference"},
		{[]string{"--adjust", "bonf"}, "--adjust"},
		{[]string{"--crossfit", "1"}, "--crossfit"},
		{[]string{"--crossfit", "3", "--train-frac", "0.5"}, "exclude"},
		{[]string{"--repeats", "0"}, "--repeats"},
		{[]string{"--ensemble", "--crossfit", "0"}, "--ensemble needs cross-fitting"},
		{[]string{"--ensemble", "--repeats", "1"}, "--ensemble needs cross-fitting"},
		{[]string{"--ensemble", "--train-frac", "0.5"}, "--ensemble and --train-frac exclude each other"},
		{[]string{"--repeats", "1", "--debias"}, "--debias and --bias-aware need the ensemble"},
		{[]string{"--inference", "split", "--bias-aware"}, "--debias and --bias-aware need the ensemble"},
		{[]string{"--perturb", "-1"}, "--perturb"},
		{[]string{"--perturb", "0"}, "--perturb"},
		{[]string{"--groups", "g=age,nope"}, "nope"},
		{[]string{"--groups", "g"}, "--groups"},
		{[]string{"--groups-file", "missing.txt"}, "missing.txt"},
	} {
		_, stderr, code := vi(t, dir, append([]string{"estimate"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: want exit 2 naming %q, got %d: %s", c.args, c.want, code, stderr)
		}
	}
}

// TestEstimateRepeats: the default run cross-fits three folds three times
// and averages the predictions (--ensemble), with the debiased paired
// estimate (plain inference, --debias); --train-frac, --crossfit 0,
// --repeats 1 or --ensemble=false ask for the others (--crossfit K
// or --repeats M alone change the default's counts, a --model file's
// counts as if given), --inference split the
// ensemble's split inference, --debias=false the ensemble's own paired
// estimate, and the report says which (perturb its rho, repeats absent for
// one, debias and bias_aware only when on; permute's results, which
// decline the ensemble, combined "repetitions" where it is on).
func TestEstimateRepeats(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(90))
	for _, args := range [][]string{{"--out", "lin.vimodel"}, {"--repeats", "1", "--out", "split.vimodel"}, {"--crossfit", "2", "--repeats", "2", "--out", "cf2.vimodel"}} {
		if _, stderr, code := vi(t, dir, append([]string{"train", "--data", "lin.csv", "--hidden", "8", "--epochs", "5"}, args...)...); code != 0 {
			t.Fatalf("train %v: exit %d: %s", args, code, stderr)
		}
	}
	var v struct {
		Inference string  `json:"inference"`
		Perturb   float64 `json:"perturb"`
		CrossFit  int     `json:"crossfit"`
		Repeats   int     `json:"repeats"`
		Ensemble  bool    `json:"ensemble"`
		Debias    bool    `json:"debias"`
		BiasAware bool    `json:"bias_aware"`
		NEval     int     `json:"n_eval"`
		Results   []inference.Result
	}
	for _, c := range []struct {
		args                     []string
		inf                      string
		crossfit, repeats, n2    int
		rho                      float64
		ensemble, debias, bounds bool
	}{
		{nil, "plain", 3, 3, 90, 0, true, true, true},
		{[]string{"--inference", "split"}, "split", 3, 3, 90, 0, true, false, false},
		{[]string{"--debias=false"}, "plain", 3, 3, 90, 0, true, false, false},
		{[]string{"--bias-aware=false"}, "plain", 3, 3, 90, 0, true, true, false},
		{[]string{"--bias-two-sided"}, "plain", 3, 3, 90, 0, true, true, true},
		{[]string{"--repeats", "1"}, "split", 0, 0, 30, 0, false, false, false},
		{[]string{"--crossfit", "0"}, "split", 0, 0, 30, 0, false, false, false},
		{[]string{"--ensemble=false"}, "split", 0, 0, 30, 0, false, false, false},
		{[]string{"--ensemble=false", "--crossfit", "3", "--repeats", "3"}, "split", 3, 3, 90, 0, false, false, false},
		{[]string{"--inference", "perturbed", "--crossfit", "3", "--repeats", "3"}, "perturbed", 3, 3, 90, inference.DefaultPerturb, true, true, true},
		{[]string{"--inference", "perturbed", "--crossfit", "3", "--perturb", "2", "--debias=false"}, "perturbed", 3, 3, 90, 2, true, false, false},
		{[]string{"--inference", "perturbed", "--crossfit", "3", "--perturb", "2", "--repeats", "1"}, "perturbed", 3, 0, 90, 2, false, false, false},
		{[]string{"--train-frac", "0.5", "--repeats", "2"}, "split", 0, 2, 45, 0, false, false, false},
		{[]string{"--crossfit", "3", "--repeats", "2", "--ensemble"}, "plain", 3, 2, 90, 0, true, true, true},
		{[]string{"--inference", "plain", "--crossfit", "2", "--repeats", "3", "--ensemble"}, "plain", 2, 3, 90, 0, true, true, true},
		{[]string{"--inference", "plain", "--repeats", "1"}, "plain", 0, 0, 30, 0, false, false, false},
		// A flag that asks for other counts keeps the default's
		// ensemble; one that asks for one split or a model file's models
		// leaves it.
		{[]string{"--train-frac", "0.5"}, "split", 0, 0, 45, 0, false, false, false},
		{[]string{"--crossfit", "5"}, "plain", 5, 3, 90, 0, true, true, true},
		{[]string{"--repeats", "2"}, "plain", 3, 2, 90, 0, true, true, true},
		{[]string{"--crossfit", "0", "--repeats", "3"}, "split", 0, 3, 30, 0, false, false, false},
		// A model file's counts are the run's, as if given.
		{[]string{"--model", "lin.vimodel"}, "plain", 3, 3, 90, 0, true, true, true},
		{[]string{"--model", "lin.vimodel", "--ensemble=false"}, "split", 3, 3, 90, 0, false, false, false},
		{[]string{"--model", "split.vimodel"}, "split", 0, 0, 30, 0, false, false, false},
		{[]string{"--model", "cf2.vimodel"}, "plain", 2, 2, 90, 0, true, true, true},
	} {
		args := append([]string{"estimate", "--data", "lin.csv", "--estimators", "dropout,permute", "--format", "json"}, fastArgs...)
		stdout, stderr, code := vi(t, dir, append(args, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		v.Perturb, v.Repeats, v.CrossFit, v.Ensemble, v.Debias, v.BiasAware = 0, 0, 0, false, false, false
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatal(err)
		}
		if v.Inference != c.inf || v.CrossFit != c.crossfit || v.Repeats != c.repeats || v.NEval != c.n2 || len(v.Results) != 6 {
			t.Errorf("%v: inference %s crossfit %d repeats %d n_eval %d, %d results; want %s %d %d %d, 6",
				c.args, v.Inference, v.CrossFit, v.Repeats, v.NEval, len(v.Results), c.inf, c.crossfit, c.repeats, c.n2)
		}
		if v.Ensemble != c.ensemble || v.Debias != c.debias || v.BiasAware != c.bounds {
			t.Errorf("%v: ensemble %v debias %v bias_aware %v, want %v %v %v", c.args, v.Ensemble, v.Debias, v.BiasAware, c.ensemble, c.debias, c.bounds)
		}
		if v.Perturb != c.rho {
			t.Errorf("%v: perturb %v, want %v", c.args, v.Perturb, c.rho)
		}
		for _, r := range v.Results {
			if !coverage.Coherent(r, inference.DefaultLevel) {
				t.Errorf("%v, %s %s: vi %g, interval [%g, %g], p %g: interval and test disagree", c.args, r.Estimator, r.Feature, r.VI, r.CILow, r.CIHigh, r.PValue)
			}
			// permute declines the ensemble: its rows are the
			// repetitions' own estimates, and say so.
			want := ""
			if c.ensemble && r.Estimator == "permute" {
				want = inference.CombinedRepetitions
			}
			if r.Combined != want || r.Estimator == "permute" && r.BiasBound != 0 {
				t.Errorf("%v, %s %s: combined %q bias_bound %g, want %q and none", c.args, r.Estimator, r.Feature, r.Combined, r.BiasBound, want)
			}
		}
	}
}

// TestDefaultShardsMerge: the shards of a default run (no model file: each
// shard trains the nine networks itself), merged, give the report of the
// whole run: the estimates, intervals and the p-values adjusted over all
// the features. The merged CSV puts each result's adjusted p-value in its
// own column.
func TestDefaultShardsMerge(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(90))
	run := func(args ...string) string {
		t.Helper()
		return viOK(t, dir, args...)
	}
	common := append([]string{"--data", "lin.csv", "--estimators", "lazy,dropout", "--adjust", "holm", "--format", "json"}, fastArgs...)
	whole := run(append([]string{"estimate"}, common...)...)
	run(append([]string{"estimate", "--shard", "1/2", "--out", "s1.json"}, common...)...)
	run(append([]string{"estimate", "--shard", "2/2", "--out", "s2.json"}, common...)...)
	merged := run("merge", "s2.json", "s1.json")
	if got, want := stripSeconds([]byte(merged)), stripSeconds([]byte(whole)); got != want {
		t.Fatalf("the merge of the default run's shards differs from the whole run:\n%s\n---\n%s", got, want)
	}
	var rep pipeline.Report
	if err := json.Unmarshal([]byte(whole), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Debias || !rep.Ensemble || len(rep.Results) != 6 {
		t.Fatalf("whole run: debias %v ensemble %v, %d results; want the default's debiased, ensembled run of 6", rep.Debias, rep.Ensemble, len(rep.Results))
	}
	rows, err := csv.NewReader(strings.NewReader(run("merge", "--format", "csv", "s1.json", "s2.json"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := "feature,estimator,vi,se,ci_low,ci_high,bias_bound,p_value,p_adjusted,lambda,seconds"
	if len(rows) != 7 || strings.Join(rows[0], ",") != want {
		t.Fatalf("merged csv: %d rows, header %v; want 7 and %s", len(rows), rows[0], want)
	}
	for i, res := range rep.Results {
		row := rows[i+1]
		if res.PAdjusted == nil {
			t.Fatalf("%s %s: no adjusted p-value in an adjusted run", res.Feature, res.Estimator)
		}
		for j, v := range []float64{res.VI, res.SE, res.CILow, res.CIHigh, res.BiasBound, res.PValue, *res.PAdjusted} {
			if got, err := strconv.ParseFloat(row[j+2], 64); err != nil || got != v {
				t.Errorf("%s %s: csv column %s is %q, want %v", res.Feature, res.Estimator, rows[0][j+2], row[j+2], v)
			}
		}
	}
}

// TestEstimateTest: --test covariance (the default) takes cpi's p_value from the
// covariance test and says so ("test": "covariance" in the report and in
// the result, and in the table's header), leaving vi, se and the interval
// as the estimate's; dropout's reduced model keeps the
// estimate's test, as every result does with --delta or split inference
// (and the report then names no test).
func TestEstimateTest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(90))
	type report struct {
		Test    string `json:"test"`
		Results []inference.Result
	}
	run := func(args ...string) report {
		t.Helper()
		var r report
		out := viOK(t, dir, append(append([]string{"estimate", "--data", "lin.csv", "--estimators", "cpi,dropout", "--format", "json"}, fastArgs...), args...)...)
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		args []string
		test string
	}{
		{nil, "covariance"},
		{[]string{"--delta", "0.1"}, ""},
		{[]string{"--inference", "split"}, ""},
	} {
		est := run(append([]string{"--test", "estimate"}, c.args...)...)
		cov := run(append([]string{"--test", "covariance"}, c.args...)...)
		// The covariance test is the default.
		if def := run(c.args...); def.Test != cov.Test || len(def.Results) != len(cov.Results) || def.Results[0].PValue != cov.Results[0].PValue {
			t.Errorf("%v: the default's test %q p %v, --test covariance's %q p %v", c.args, def.Test, def.Results[0].PValue, cov.Test, cov.Results[0].PValue)
		}
		if est.Test != "" || cov.Test != c.test {
			t.Errorf("%v: test %q and %q, want \"\" and %q", c.args, est.Test, cov.Test, c.test)
		}
		differ := false
		for i, e := range est.Results {
			g := cov.Results[i]
			if g.VI != e.VI || g.SE != e.SE || g.CILow != e.CILow || g.CIHigh != e.CIHigh {
				t.Errorf("%v, %s %s: the covariance test changed the estimate or interval: %+v, %+v", c.args, e.Estimator, e.Feature, g, e)
			}
			want := ""
			if e.Estimator == "cpi" {
				want = c.test
			}
			if e.Test != "" || g.Test != want || e.Estimator != "cpi" && g.PValue != e.PValue {
				t.Errorf("%v, %s %s: test %q p %v, want %q (the estimate's p %v)", c.args, e.Estimator, e.Feature, g.Test, g.PValue, want, e.PValue)
			}
			differ = differ || g.PValue != e.PValue
		}
		if differ != (c.test != "") {
			t.Errorf("%v: p-values differ %v, want %v", c.args, differ, c.test != "")
		}
	}
	table := viOK(t, dir, append([]string{"estimate", "--data", "lin.csv", "--estimators", "cpi", "--test", "covariance"}, fastArgs...)...)
	if !strings.Contains(table, "p_value: H0 VI <= 0 (cpi: covariance test)") {
		t.Errorf("table header does not name the covariance test:\n%s", table)
	}
	if _, stderr, code := vi(t, dir, "estimate", "--test", "bogus"); code != 2 || !strings.Contains(stderr, "estimate or covariance") {
		t.Errorf("--test bogus: exit %d: %s", code, stderr)
	}
}
