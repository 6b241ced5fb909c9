package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shapleyJSON is the part of vi shapley's JSON the tests read.
type shapleyJSON struct {
	Measure string  `json:"measure"`
	NEval   int     `json:"n_eval"`
	Level   float64 `json:"level"`
	Full    struct {
		Score float64 `json:"score"`
	} `json:"full"`
	Empty struct {
		Score *float64 `json:"score"`
	} `json:"empty"`
	Adjust  string `json:"adjust"`
	Subsets struct {
		Players    int     `json:"players"`
		Exact      bool    `json:"exact"`
		Enumerated int     `json:"enumerated"`
		Sizes      []int   `json:"enumerated_sizes"`
		Rule       string  `json:"rule"`
		Threshold  float64 `json:"threshold"`
		MaxSubsets int     `json:"max_subsets"`
	} `json:"subsets"`
	Estimators []struct {
		Estimator string   `json:"estimator"`
		Sum       float64  `json:"sum"`
		Subsets   int      `json:"subsets"`
		Pairs     int      `json:"pairs"`
		Converged bool     `json:"converged"`
		Figure    *float64 `json:"figure"`
	} `json:"estimators"`
	Results []struct {
		Feature     string   `json:"feature"`
		Estimator   string   `json:"estimator"`
		VI          float64  `json:"vi"`
		SE          float64  `json:"se"`
		CILow       float64  `json:"ci_low"`
		CIHigh      float64  `json:"ci_high"`
		PValue      *float64 `json:"p_value"`
		PAdjusted   *float64 `json:"p_adjusted"`
		SEInfluence *float64 `json:"se_influence"`
		SESampling  *float64 `json:"se_sampling"`
		Lambda      *float64 `json:"lambda"`
	} `json:"results"`
}

// TestShapleyJSON runs vi shapley with exact enumeration (3 features: 6
// subsets) and two reduced models: the JSON contract, the efficiency
// constraint, the order of results, and the importance ranking of
// y = 2 x1 + x2 + noise.
func TestShapleyJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(300))
	// On the linear backend (OLS) lazy with a vanishing penalty is the
	// reduced OLS fit, i.e. retrain, and both converge to E[y | x_S].
	_, errs, code := vi(t, dir, "shapley", "--data", "data.csv", "--backend", "linear", "--reduced", "lazy,retrain",
		"--lambda", "1e-9", "--measure", "r2", "--format", "json", "--out", "vi.json", "--plot", "vi.png", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "vi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep shapleyJSON
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Measure != "r2" || rep.Empty.Score == nil || !rep.Subsets.Exact || rep.Subsets.Enumerated != 6 || rep.Level != 0.95 || rep.Adjust != "none" {
		t.Fatalf("header: %s", b[:min(len(b), 400)])
	}
	if len(rep.Results) != 6 || len(rep.Estimators) != 2 {
		t.Fatalf("%d results, %d estimators", len(rep.Results), len(rep.Estimators))
	}
	want := []string{"shapley-lazy", "shapley-lazy", "shapley-lazy", "shapley-retrain", "shapley-retrain", "shapley-retrain"}
	diff := rep.Full.Score - *rep.Empty.Score
	for e := range 2 {
		sum := 0.0
		for j := range 3 {
			r := rep.Results[e*3+j]
			if r.Estimator != want[e*3+j] || r.Feature != []string{"x1", "x2", "x3"}[j] {
				t.Errorf("result %d: %s %s", e*3+j, r.Feature, r.Estimator)
			}
			if r.SEInfluence == nil || r.SESampling == nil || *r.SESampling != 0 || r.PValue == nil || r.PAdjusted != nil {
				t.Errorf("%s %s: se parts %v %v (exact: sampling 0)", r.Feature, r.Estimator, r.SEInfluence, r.SESampling)
			}
			if !(r.CILow < r.VI && r.VI < r.CIHigh) || math.Abs(r.SE-*r.SEInfluence) > 1e-12 {
				t.Errorf("%s %s: vi %v se %v ci [%v, %v]", r.Feature, r.Estimator, r.VI, r.SE, r.CILow, r.CIHigh)
			}
			if e == 0 && (r.Lambda == nil || *r.Lambda != 1e-9) {
				t.Errorf("%s lazy: lambda %v, want 1e-9", r.Feature, r.Lambda)
			}
			sum += r.VI
		}
		if s := rep.Estimators[e]; !s.Converged || s.Subsets != 6 || s.Pairs != 0 || s.Figure == nil || *s.Figure != 0 {
			t.Errorf("%s: summary %+v, want 6 subsets, converged, figure 0", s.Estimator, s)
		}
		if math.Abs(sum-diff) > 1e-9 || math.Abs(rep.Estimators[e].Sum-diff) > 1e-9 {
			t.Errorf("%s: values sum to %v (reported %v), full - empty = %v", want[e*3], sum, rep.Estimators[e].Sum, diff)
		}
	}
	// R² of y = 2 x1 + x2 + 0.3 noise with independent standard normal
	// features: Shapley values (4, 1, 0)/5.09 (each feature's share of the
	// explained variance). Within 4 SE, and lazy equals retrain.
	truth := []float64{4 / 5.09, 1 / 5.09, 0}
	for j := range 3 {
		l, r := rep.Results[j], rep.Results[3+j]
		if math.Abs(l.VI-truth[j]) > 4*l.SE+0.01 {
			t.Errorf("%s: lazy %v ± %v, truth %v", l.Feature, l.VI, l.SE, truth[j])
		}
		if math.Abs(l.VI-r.VI) > 1e-5 {
			t.Errorf("%s: lazy %v, retrain %v; on OLS they agree", l.Feature, l.VI, r.VI)
		}
	}
	png, err := os.ReadFile(filepath.Join(dir, "vi.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("vi.png is not a PNG (%v)", err)
	}
}

// TestShapleySampledCSV: sampled subsets give a positive sampling SE and
// the CSV has its header.
func TestShapleySampledCSV(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(200))
	args := append([]string{"shapley", "--data", "data.csv", "--reduced", "dropout", "--subsets", "4", "--format", "csv"}, fastArgs...)
	out, errs, code := vi(t, dir, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 || strings.Join(recs[0], ",") != "feature,estimator,vi,se,ci_low,ci_high,p_value,se_influence,se_sampling,seconds" {
		t.Fatalf("csv:\n%s", out)
	}
	for _, r := range recs[1:] {
		if r[1] != "shapley-dropout" || r[8] == "0" {
			t.Errorf("row %v: want shapley-dropout with a sampling se", r)
		}
	}
}

func TestShapleyBadUsage(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(60))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--reduced", "nope"}, `unknown estimator "nope"`},
		{[]string{"--exact", "--subsets", "10"}, "--exact"},
		{[]string{"--exact", "--max-subsets", "100"}, "--exact"},
		{[]string{"--subsets", "10", "--max-subsets", "100"}, "--max-subsets"},
		{[]string{"--max-subsets", "0"}, "--max-subsets"},
		{[]string{"--adjust", "sidak"}, "sidak"},
		{[]string{"--groups", "rows"}, "rows"},
		{[]string{"--groups", "a=x1,nope"}, "nope"},
		{[]string{"--groups-file", "missing.txt"}, "missing.txt"},
		{[]string{"--subsets", "-3"}, "--subsets"},
		{[]string{"--format", "xml"}, "xml"},
		{[]string{"--lambda", "-1"}, "--lambda"},
		{[]string{"--plot", "nodir/x.png"}, "nodir"},
		{[]string{"--measure", "accuracy"}, "accuracy"},
		{[]string{"--subsets", "1"}, "do not identify"},
		{[]string{"--max-subsets", "2"}, "do not identify"},
	} {
		args := append([]string{"shapley", "--data", "data.csv"}, tc.args...)
		_, errs, code := vi(t, dir, args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("vi %s: exit %d, stderr %q; want exit 2 naming %q", strings.Join(args, " "), code, errs, tc.want)
		}
	}
	// A multiclass response is refused before any model trains.
	var classes strings.Builder
	classes.WriteString("a,b,y\n")
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&classes, "%d,%d,%d\n", i, i%7, i%3)
	}
	writeFile(t, filepath.Join(dir, "classes.csv"), classes.String())
	if _, errs, code := vi(t, dir, "shapley", "--data", "classes.csv"); code != 2 || !strings.Contains(errs, "not multiclass") {
		t.Errorf("vi shapley on a multiclass response: exit %d, stderr %q; want exit 2 saying it is not supported", code, errs)
	}
	checkNoFiles(t, dir, "data.csv", "classes.csv")
}

// wideCSV returns n rows of 12 independent standard normal features and
// y = sum_j b_j x_j + noise with b = (1.5, 1.2, 1, 0.8, 0.6, 0.4, 0, ...):
// the population Shapley values of R² are b_j^2 / Var(y).
func wideCSV(n int) (string, []float64) {
	b := []float64{1.5, 1.2, 1, 0.8, 0.6, 0.4, 0, 0, 0, 0, 0, 0}
	rng := rand.New(rand.NewPCG(12, 12))
	var sb strings.Builder
	for j := range b {
		fmt.Fprintf(&sb, "x%d,", j+1)
	}
	sb.WriteString("y\n")
	for range n {
		y := 0.5 * rng.NormFloat64()
		for _, bj := range b {
			x := rng.NormFloat64()
			y += bj * x
			fmt.Fprintf(&sb, "%.5f,", x)
		}
		fmt.Fprintf(&sb, "%.5f\n", y)
	}
	vy := 0.25
	for _, bj := range b {
		vy += bj * bj
	}
	truth := make([]float64, len(b))
	for j, bj := range b {
		truth[j] = bj * bj / vy
	}
	return sb.String(), truth
}

// TestShapleySampledConverges: with the defaults on 12 features the
// heaviest sizes are enumerated and pairs sampled until the rule holds; the
// JSON says so, the values are within 4 SE of the population values, the
// p-values are adjusted with --adjust bh, and the table's header shows the
// figure. Groups make players of columns (6 players here: every subset).
func TestShapleySampledConverges(t *testing.T) {
	dir := t.TempDir()
	data, truth := wideCSV(1000)
	writeFile(t, filepath.Join(dir, "data.csv"), data)
	args := []string{"shapley", "--data", "data.csv", "--backend", "linear", "--reduced", "retrain", "--measure", "r2", "--workers", "2"}
	out, errs, code := vi(t, dir, append(args, "--format", "json", "--adjust", "bh")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep shapleyJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	s := rep.Estimators[0]
	if rep.Subsets.Exact || rep.Subsets.Players != 12 || len(rep.Subsets.Sizes) != 6 || rep.Subsets.Rule != "se_sampling/range" ||
		rep.Subsets.Threshold != 0.025 || rep.Subsets.MaxSubsets != 16384 || rep.Adjust != "bh" {
		t.Errorf("subsets %+v, adjust %q", rep.Subsets, rep.Adjust)
	}
	if !s.Converged || s.Figure == nil || *s.Figure > 0.025 || s.Pairs < 64 || s.Subsets <= rep.Subsets.Enumerated {
		t.Errorf("summary %+v: want converged with a figure <= 0.025 after sampling pairs", s)
	}
	for j, r := range rep.Results {
		if math.Abs(r.VI-truth[j]) > 4*r.SE || r.PAdjusted == nil || *r.PAdjusted < *r.PValue {
			t.Errorf("%s: %v ± %v (truth %v), p %v adjusted %v", r.Feature, r.VI, r.SE, truth[j], r.PValue, r.PAdjusted)
		}
	}
	t.Logf("%d subsets (%d enumerated, %d pairs), figure %.4f", s.Subsets, rep.Subsets.Enumerated, s.Pairs, *s.Figure)
	table, errs, code := vi(t, dir, args...)
	if code != 0 || !strings.Contains(table, "converged true (se_sampling/range") || !strings.Contains(table, "sizes [1 2 3 9 10 11] enumerated (596)") {
		t.Errorf("exit %d, %s; table header:\n%s", code, errs, table[:min(len(table), 600)])
	}

	table, errs, code = vi(t, dir, append(args, "--groups", "big=x1,x2;null=x7,x8,x9,x10,x11,x12")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"subsets: all 62 of 6 players (exact", "big ", "null ", "p_value"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
