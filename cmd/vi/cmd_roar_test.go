package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// TestROARPatchGroups runs vi roar on a 4x4 image set with --groups
// patch2x2: the orderings order the four patches, each fraction removes
// whole patches (4 pixels each), and the CSV says so.
func TestROARPatchGroups(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for j := 0; j < 16; j++ {
		fmt.Fprintf(&b, "px%d,", j)
	}
	b.WriteString("y\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		var x [16]float64
		for j := range x {
			x[j] = rng.NormFloat64()
			fmt.Fprintf(&b, "%.4f,", x[j])
		}
		// The top-left patch (pixels 0, 1, 4, 5) carries the signal.
		fmt.Fprintf(&b, "%.4f\n", x[0]+x[1]+x[4]+x[5]+0.1*rng.NormFloat64())
	}
	writeFile(t, filepath.Join(dir, "img.csv"), b.String())
	out, errs, code := vi(t, dir, "roar", "--data", "img.csv", "--groups", "patch2x2", "--backend", "cnn", "--image", "4x4", "--fractions", ".25,1",
		"--estimators", "dropout", "--epochs", "30", "--measure", "r2", "--format", "csv", "--ordering", "grad")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"ordering", "fraction", "removed", "removed_columns", "estimator"}, {"grad", "0.25", "1", "4", "dropout"}, {"grad", "1", "4", "16", "dropout"}}
	if len(rows) != 3 {
		t.Fatalf("want a header and 2 rows, got %q", rows)
	}
	for i, w := range want {
		if got := rows[i][:5]; !slices.Equal(got, w) {
			t.Errorf("row %d: want %q, got %q", i, w, got)
		}
	}
	// Removing the signal's patch first leaves dropout with no R².
	if r2, _ := strconv.ParseFloat(rows[1][5], 64); r2 > 0.2 {
		t.Errorf("grad ordering's first patch removed: R² %.3f, want near 0 (the signal's patch first)", r2)
	}
	_, errs, code = vi(t, dir, "roar", "--data", "img.csv", "--groups", "patch5x5", "--backend", "cnn", "--image", "4x4")
	if code != 2 || !strings.Contains(errs, "want patchRxC") {
		t.Errorf("patch5x5 of a 4x4 image: want exit 2 naming patchRxC, got %d: %s", code, errs)
	}
}
