package main

import (
	"bytes"
	"encoding/json"
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
