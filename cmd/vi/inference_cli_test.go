package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

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
	if err := writeReport(&b, r, "csv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "feature,estimator,vi,se,ci_low,ci_high,p_value,p_adjusted,lambda,seconds" || !strings.HasPrefix(lines[1], "x1,lazy,0.5,0.1,0.3,0.7,0.01,0.03,12.5,") {
		t.Errorf("csv:\n%s", b.String())
	}
	b.Reset()
	if err := writeReport(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "inference split  p_value: H0 VI <= 0.1  adjust holm") || !strings.Contains(b.String(), "p_adjusted") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	if err := writeReport(&b, r, "json"); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Inference string             `json:"inference"`
		Results   []framework.Result `json:"results"`
	}
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v.Inference != "split" || v.Results[0].PValue != 0.01 || *v.Results[0].PAdjusted != 0.03 {
		t.Errorf("json: %v\n%s", err, b.String())
	}
}

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
		{[]string{"--repeats", "2", "--model", "m.vimodel"}, "--repeats 2 and --model exclude each other"},
		{[]string{"--ensemble", "--crossfit", "0"}, "--ensemble needs cross-fitting"},
		{[]string{"--ensemble", "--repeats", "1"}, "--ensemble needs cross-fitting"},
		{[]string{"--ensemble", "--train-frac", "0.5"}, "--ensemble and --train-frac exclude each other"},
		{[]string{"--ensemble", "--model", "m.vimodel"}, "--ensemble and --model exclude each other"},
		{[]string{"--paired", "yes"}, "unknown --paired"},
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
// and averages the predictions (--ensemble), with the paired estimate and
// the split interval; --train-frac, --crossfit 0, --repeats 1 or
// --ensemble=false ask for the others, --paired off for the interval's own
// estimate, and the report says which (perturb its rho, repeats absent for
// one, paired only when on).
func TestEstimateRepeats(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(90))
	var v struct {
		Inference string  `json:"inference"`
		Perturb   float64 `json:"perturb"`
		CrossFit  int     `json:"crossfit"`
		Repeats   int     `json:"repeats"`
		Ensemble  bool    `json:"ensemble"`
		Paired    bool    `json:"paired"`
		NEval     int     `json:"n_eval"`
		Results   []framework.Result
	}
	for _, c := range []struct {
		args                  []string
		inf                   string
		crossfit, repeats, n2 int
		rho                   float64
		ensemble, paired      bool
	}{
		{nil, "split", 3, 3, 90, 0, true, true},
		{[]string{"--paired", "off"}, "split", 3, 3, 90, 0, true, false},
		{[]string{"--repeats", "1"}, "split", 0, 0, 30, 0, false, false},
		{[]string{"--repeats", "1", "--paired", "on"}, "split", 0, 0, 30, 0, false, true},
		{[]string{"--crossfit", "0"}, "split", 0, 0, 30, 0, false, false},
		{[]string{"--ensemble=false"}, "split", 0, 0, 30, 0, false, false},
		{[]string{"--ensemble=false", "--crossfit", "3", "--repeats", "3"}, "split", 3, 3, 90, 0, false, true},
		{[]string{"--inference", "perturbed", "--crossfit", "3", "--repeats", "3"}, "perturbed", 3, 3, 90, framework.DefaultPerturb, true, false},
		{[]string{"--inference", "perturbed", "--crossfit", "3", "--perturb", "2", "--paired", "on"}, "perturbed", 3, 3, 90, 2, true, true},
		{[]string{"--inference", "perturbed", "--crossfit", "3", "--perturb", "2", "--repeats", "1"}, "perturbed", 3, 0, 90, 2, false, false},
		{[]string{"--train-frac", "0.5", "--repeats", "2"}, "split", 0, 2, 45, 0, false, true},
		{[]string{"--crossfit", "3", "--repeats", "2", "--ensemble"}, "split", 3, 2, 90, 0, true, true},
		{[]string{"--inference", "plain", "--crossfit", "2", "--repeats", "3", "--ensemble"}, "plain", 2, 3, 90, 0, true, false},
		{[]string{"--inference", "plain", "--ensemble", "--paired", "on"}, "plain", 3, 3, 90, 0, true, false},
	} {
		args := append([]string{"estimate", "--data", "lin.csv", "--estimators", "dropout", "--format", "json"}, fastArgs...)
		stdout, stderr, code := vi(t, dir, append(args, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		v.Perturb, v.Repeats, v.CrossFit, v.Ensemble, v.Paired = 0, 0, 0, false, false
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatal(err)
		}
		if v.Inference != c.inf || v.CrossFit != c.crossfit || v.Repeats != c.repeats || v.NEval != c.n2 || len(v.Results) != 3 {
			t.Errorf("%v: inference %s crossfit %d repeats %d n_eval %d, %d results; want %s %d %d %d, 3",
				c.args, v.Inference, v.CrossFit, v.Repeats, v.NEval, len(v.Results), c.inf, c.crossfit, c.repeats, c.n2)
		}
		if v.Ensemble != c.ensemble || v.Paired != c.paired {
			t.Errorf("%v: ensemble %v paired %v, want %v %v", c.args, v.Ensemble, v.Paired, c.ensemble, c.paired)
		}
		if v.Perturb != c.rho {
			t.Errorf("%v: perturb %v, want %v", c.args, v.Perturb, c.rho)
		}
	}
}
