package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestROARJSON runs vi roar on a small linear data set with the mlp
// backend: the JSON contract, both orderings, and the SVG plot.
func TestROARJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(300))
	_, errs, code := vi(t, dir, "roar", "--data", "data.csv", "--ordering", "grad,random", "--fractions", ".5,1",
		"--estimators", "dropout,lazy-es", "--es-steps", "20", "--epochs", "30", "--measure", "r2",
		"--format", "json", "--out", "roar.json", "--plot", "roar.svg", "--workers", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(filepath.Join(dir, "roar.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Measure string `json:"measure"`
		Results []struct {
			Ordering  string   `json:"ordering"`
			Fraction  float64  `json:"fraction"`
			Estimator string   `json:"estimator"`
			Score     *float64 `json:"score"`
			SE        *float64 `json:"se"`
			Seconds   *float64 `json:"seconds"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Measure != "r2" || len(rep.Results) != 2*2*2 {
		t.Fatalf("measure %q, %d results; want r2 and 8:\n%s", rep.Measure, len(rep.Results), b)
	}
	r := rep.Results[0]
	if r.Ordering != "grad" || r.Fraction != 0.5 || r.Estimator != "dropout" || r.Score == nil || r.SE == nil || r.Seconds == nil {
		t.Errorf("first result %+v: want grad, 0.5, dropout with score, se and seconds", r)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "roar.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("roar.svg: %v, %d bytes", err, len(svg))
	}
	// Usage errors.
	for _, args := range [][]string{
		{"roar", "--data", "data.csv", "--ordering", "saliency"},
		{"roar", "--data", "data.csv", "--fractions", "0"},
		{"roar", "--data", "data.csv", "--plot", "roar.gif"},
	} {
		if _, errs, code := vi(t, dir, args...); code != 2 || !strings.HasPrefix(errs, "vi: ") {
			t.Errorf("%v: want exit 2 with a vi: message, got %d: %s", args, code, errs)
		}
	}
}
