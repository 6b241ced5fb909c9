package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	_ "github.com/lazyvi/lazyvi/measures" // the losses read as losses
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/workflows/roar"
)

func TestNum(t *testing.T) {
	for i, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1, "1.000"}, {-2903.14159, "-2903"}, {0.0123456, "0.01235"},
		{12.3456, "12.35"}, {1e-7, "1.000e-07"}, {3e9, "3.000e+09"},
		{math.Inf(1), "inf"}, {math.NaN(), "NaN"},
	} {
		if got := num(tc.v); got != tc.want {
			t.Errorf("Case %d: num(%g): want %q, got %q", i, tc.v, tc.want, got)
		}
	}
}

func sampleReport() *pipeline.Report {
	l := 12.5
	return &pipeline.Report{
		RunInfo: pipeline.RunInfo{Measure: "mse", Backend: "mlp", Task: "regression", N: 30, NTrain: 20, NEval: 10, Seed: 1, Level: 0.95},
		Full:    pipeline.FullResult{Score: -1.25, Seconds: 0.5},
		Results: []inference.Result{
			{Feature: "x1", Estimator: "lazy", VI: 0.5, SE: 0.1, CILow: 0.3, CIHigh: 0.7, Seconds: 0.01, Extra: []framework.Field{{Key: "lambda", Value: l}}},
			{Feature: "longer_name", Estimator: "lazy", VI: 0, SE: 0, Seconds: 0.01, Extra: []framework.Field{{Key: "lambda", Value: nil}, {Key: "no_update", Value: true}}},
			{Feature: "x1", Estimator: "dropout", VI: 1, SE: 0.2, CILow: 0.6, CIHigh: 1.4, Seconds: 0.001},
		},
	}
}

func TestWriteCSV(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sampleReport(), "csv"); err != nil {
		t.Fatal(err)
	}
	want := `feature,estimator,vi,se,ci_low,ci_high,p_value,lambda,seconds
x1,lazy,0.5,0.1,0.3,0.7,0,12.5,0.010
longer_name,lazy,0,0,0,0,0,inf,0.010
x1,dropout,1,0.2,0.6,1.4,0,,0.001
`
	if b.String() != want {
		t.Errorf("want\n%s\ngot\n%s", want, b.String())
	}
}

// TestWriteTable: the first table is one row per feature of the first
// estimator, the most important first, with dropout's VI in a column
// beside it; the other estimators follow in blocks of their own, in the
// first table's order.
func TestWriteTable(t *testing.T) {
	r := sampleReport()
	r.Results = append(r.Results, inference.Result{Feature: "longer_name", Estimator: "dropout", VI: 0.25, SE: 0.1})
	var b bytes.Buffer
	if err := Write(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("want 7 lines, got\n%s", b.String())
	}
	if !strings.Contains(lines[0], "measure mse") || !strings.Contains(lines[0], "n_eval 10") || !strings.Contains(lines[1], "full model: mse 1.250") {
		t.Errorf("header lines:\n%s\n%s", lines[0], lines[1])
	}
	if !strings.HasPrefix(lines[3], "lazy: each feature's VI, the most important first") || !strings.Contains(lines[3], "dropout: its VI") {
		t.Errorf("caption: %q", lines[3])
	}
	if f := strings.Fields(lines[4]); strings.Join(f, " ") != "feature vi se ci_low ci_high p_value lambda dropout" {
		t.Errorf("columns: %q", lines[4])
	}
	// Columns align: every row has the same width.
	for _, l := range lines[5:] {
		if len(l) != len(lines[4]) {
			t.Errorf("ragged table:\n%s", strings.Join(lines[4:], "\n"))
			break
		}
	}
	if f := strings.Fields(lines[5]); f[0] != "x1" || f[1] != "0.5000" || f[len(f)-1] != "1.000" {
		t.Errorf("the most important row first, with dropout's VI last: %q", lines[5])
	}
	if f := strings.Fields(lines[6]); f[0] != "longer_name" || f[len(f)-2] != "inf" || f[len(f)-1] != "0.2500" {
		t.Errorf("no-update row: %q", lines[6])
	}

	// A third estimator: a block of its own, in lazy's order.
	r.Results = append(r.Results,
		inference.Result{Feature: "longer_name", Estimator: "retrain", VI: 0.125, SE: 0.1},
		inference.Result{Feature: "x1", Estimator: "retrain", VI: 0.375, SE: 0.1})
	b.Reset()
	if err := Write(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 12 || !strings.HasPrefix(lines[8], "retrain: each feature's VI, in lazy's order") ||
		!strings.HasPrefix(strings.TrimSpace(lines[10]), "x1 ") || !strings.HasPrefix(strings.TrimSpace(lines[11]), "longer_name ") || strings.Contains(lines[9], "dropout") {
		t.Errorf("retrain's block:\n%s", b.String())
	}
}

// TestWriteCheck: --check's block gives each checked feature's two VIs,
// their difference and whether the reference lies in the first
// estimator's interval, under a line that sums them up.
func TestWriteCheck(t *testing.T) {
	r := sampleReport()
	r.Check = &pipeline.CheckReport{Estimator: "retrain", Of: "lazy", Features: []string{"x1"}, Inside: 1, MaxDiff: 0.125, MaxDiffSE: 1.25,
		Results: []inference.Result{{Feature: "x1", Estimator: "retrain", VI: 0.625, SE: 0.1, PValue: 0.001}}}
	var b bytes.Buffer
	if err := Write(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"check: retrain on the 1 features lazy ranks highest: retrain's VI inside lazy's interval for 1 of 1; largest difference 0.1250 (1.250 lazy se)"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	last := strings.Fields(out[strings.LastIndex(strings.TrimRight(out, "\n"), "\n")+1:])
	if strings.Join(last, " ") != "x1 0.5000 0.6250 -0.1250 inside 0.001" {
		t.Errorf("check row: %q", last)
	}
}

// TestWriteTableUnensembled: the header of an ensembled, debiased run
// says which estimators' rows are the repetitions' own estimates instead
// (Result.Combined), and says nothing where none are.
func TestWriteTableUnensembled(t *testing.T) {
	r := sampleReport()
	r.Inference, r.CrossFit, r.Repeats, r.Ensemble, r.Debias = "plain", 3, 3, true, true
	var b bytes.Buffer
	if err := Write(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "own estimates") {
		t.Errorf("no estimator declined the ensemble, yet the header says one did:\n%s", b.String())
	}
	r.Results = append(r.Results,
		inference.Result{Feature: "x1", Estimator: "permute", VI: 2, SE: 0.1, CILow: 1.8, CIHigh: 2.2, Combined: inference.CombinedRepetitions},
		inference.Result{Feature: "longer_name", Estimator: "permute", SE: 0.1, CILow: -0.2, CIHigh: 0.2, PValue: 0.5, Combined: inference.CombinedRepetitions})
	b.Reset()
	if err := Write(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "repeats 3 (predictions averaged)  debiased") {
		t.Errorf("inference line: %q", lines[1])
	}
	if want := "permute: the mean of the repetitions' own estimates (random reduced predictions: not averaged over models, not debiased)"; lines[2] != want {
		t.Errorf("line 3: %q, want %q", lines[2], want)
	}
}

// TestLossesAsLosses: a loss measure's scores read as the loss (positive:
// mse 3216, not -3216) in the header, the baselines and ROAR's table, with
// the full model "better" or "worse" by how much; other measures read as
// they are.
func TestLossesAsLosses(t *testing.T) {
	rep := sampleReport()
	rep.Measure = "mse"
	rep.Full.Score = -3216
	rep.Full.Baselines = []pipeline.BaselineScore{{Name: "intercept", Score: -5935, Gain: 2719, GainSE: 288}, {Name: "linear", Score: -3093, Gain: -123, GainSE: 88}}
	var b bytes.Buffer
	if err := Write(&b, rep, "table"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"full model: mse 3216 ", "baselines: mse intercept 5935 (full model better by 2719, se 288.0), linear 3093 (full model worse by 123.0, se 88.00)"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("table lacks %q:\n%s", w, b.String())
		}
	}
	rep.Measure, rep.Full.Score, rep.Full.Baselines = "r2", 0.479, nil
	b.Reset()
	if err := Write(&b, rep, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "full model: r2 0.4790 ") {
		t.Errorf("r2 not as it is:\n%s", b.String())
	}
	r := &roar.Report{Measure: "mse", Results: []roar.Result{{Ordering: "grad", Fraction: 0.5, Removed: 1, Estimator: "retrain", Score: -2.5, SE: 0.1}}}
	r.Full.Score = -1.25
	b.Reset()
	if err := WriteROAR(&b, r, "table", []string{"retrain"}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"full model: mse 1.250 ", "estimator    mse", " 2.500 "} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("ROAR table lacks %q:\n%s", w, b.String())
		}
	}
	b.Reset()
	if err := WriteROAR(&b, r, "csv", []string{"retrain"}); err != nil {
		t.Fatal(err)
	}
	if want := "ordering,fraction,removed,estimator,score,loss,se,seconds\ngrad,0.5,1,retrain,-2.5,2.5,0.1,0.000\n"; b.String() != want {
		t.Errorf("ROAR csv:\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteAdjusted(t *testing.T) {
	r := sampleReport()
	r.Inference, r.Adjust, r.Delta = "split", "holm", 0.1
	for i := range r.Results {
		p := 0.01 * float64(i+1)
		r.Results[i].PValue = p
		a := 3 * p
		r.Results[i].PAdjusted = &a
	}
	var b bytes.Buffer
	if err := Write(&b, r, "csv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "feature,estimator,vi,se,ci_low,ci_high,p_value,p_adjusted,lambda,seconds" || !strings.HasPrefix(lines[1], "x1,lazy,0.5,0.1,0.3,0.7,0.01,0.03,12.5,") {
		t.Errorf("csv:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "inference split  p_value: H0 VI <= 0.1  adjust holm") || !strings.Contains(b.String(), "p_adjusted") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	if err := Write(&b, r, "json"); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Inference string             `json:"inference"`
		Results   []inference.Result `json:"results"`
	}
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v.Inference != "split" || v.Results[0].PValue != 0.01 || *v.Results[0].PAdjusted != 0.03 {
		t.Errorf("json: %v\n%s", err, b.String())
	}
}
