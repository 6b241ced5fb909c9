package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// yourDataCSV writes a file as users have them: an ID column, two
// numeric features (x1 important, noise not), a text column (region), an
// integer-coded categorical (zone), about 1% of the feature cells empty,
// and the response y = 2 x1 + region's effect + zone's effect + noise.
// The VIs (mse, the explained variance of each column) are known: x1's
// 2^2 = 4, region's the variance of its effects over four equally likely
// regions, 0.8125, zone's over five zones, 0.64; noise's 0.
func yourDataCSV(t *testing.T, path string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(44, 7))
	region := []string{"north", "south", "east", "west"}
	regionEffect := []float64{1.5, -1, 0, 0.5}
	zoneEffect := []float64{0, 0, 1.5, 0, -1}
	var b strings.Builder
	b.WriteString("id,x1,noise,region,zone,y\n")
	for i := 0; i < 600; i++ {
		x1, noise, r, z := rng.NormFloat64(), rng.NormFloat64(), rng.IntN(4), rng.IntN(5)
		y := 2*x1 + regionEffect[r] + zoneEffect[z] + 0.5*rng.NormFloat64()
		cells := []string{fmt.Sprint(1000 + i), fmt.Sprintf("%.4f", x1), fmt.Sprintf("%.4f", noise), region[r], fmt.Sprint(z + 1)}
		for k := 1; k < len(cells); k++ {
			if rng.Float64() < 0.01 {
				cells[k] = ""
			}
		}
		fmt.Fprintf(&b, "%s,%.4f\n", strings.Join(cells, ","), y)
	}
	writeFile(t, path, b.String())
}

type jsonResult struct {
	Feature   string  `json:"feature"`
	Estimator string  `json:"estimator"`
	VI        float64 `json:"vi"`
	SE        float64 `json:"se"`
	P         float64 `json:"p_value"`
}

// A file with a text column, an integer-coded categorical, 1% missing
// cells and an ID column runs as it is: one VI per column of the file, the
// planted ones found at their known values (within 4 standard errors),
// the null one not.
func TestEstimateYourDataAsItIs(t *testing.T) {
	dir := t.TempDir()
	yourDataCSV(t, filepath.Join(dir, "f.csv"))
	out := viOK(t, dir, "estimate", "--data", "f.csv", "--target", "y", "--missing", "impute", "--drop", "id",
		"--categorical", "zone", "--backend", "linear", "--estimators", "lazy", "--format", "json")
	var rep struct{ Results []jsonResult }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	truth := map[string]float64{"x1": 4, "noise": 0, "region": 0.8125, "zone": 0.64}
	if len(rep.Results) != len(truth) {
		t.Fatalf("%d results, want one per column of the file but id and y (%d): %+v", len(rep.Results), len(truth), rep.Results)
	}
	for _, r := range rep.Results {
		want, ok := truth[r.Feature]
		if !ok {
			t.Fatalf("result for %q, not a column of the file", r.Feature)
		}
		if math.Abs(r.VI-want) > 4*r.SE+1e-3 {
			t.Errorf("%s: VI %.4f (se %.4f), truth %.4f", r.Feature, r.VI, r.SE, want)
		}
		if found := r.P < 0.001; found != (want > 0) {
			t.Errorf("%s: p-value %.3g, planted %v", r.Feature, r.P, want > 0)
		}
	}
}

// Without --missing, the run stops with exit code 2 naming every column
// with missing cells and how many.
func TestEstimateMissingCellsCounted(t *testing.T) {
	dir := t.TempDir()
	yourDataCSV(t, filepath.Join(dir, "f.csv"))
	_, stderr, code := vi(t, dir, "estimate", "--data", "f.csv", "--target", "y", "--drop", "id", "--categorical", "zone")
	if code != 2 || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line", code, stderr)
	}
	for _, want := range []string{"f.csv: ", " missing cells in 4 columns: ", `"x1" `, `"noise" `, `"region" `, `"zone" `, "--missing drop", "--missing impute"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
}

// The same data as Parquet (written by Apache Arrow's Go implementation,
// dictionary-encoded strings, nulls, zstd pages; see
// dataio/testdata/parquetgen) gives the same JSON as the CSV, seconds aside.
func TestParquetSameJSONAsCSV(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"mixed.csv", "mixed.parquet"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), string(b))
	}
	args := []string{"--target", "y", "--drop", "id", "--categorical", "zone", "--missing", "impute", "--backend", "linear", "--format", "json"}
	var reps []any
	for _, f := range []string{"mixed.csv", "mixed.parquet"} {
		var rep any
		if err := json.Unmarshal([]byte(viOK(t, dir, append([]string{"estimate", "--data", f}, args...)...)), &rep); err != nil {
			t.Fatal(err)
		}
		reps = append(reps, withoutSeconds(rep))
	}
	if !reflect.DeepEqual(reps[0], reps[1]) {
		a, _ := json.Marshal(reps[0])
		b, _ := json.Marshal(reps[1])
		t.Fatalf("Parquet's JSON differs from the CSV's:\n%s\n%s", a, b)
	}
}

// withoutSeconds removes every "seconds" field of a decoded JSON value.
func withoutSeconds(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "seconds")
		for k, e := range x {
			x[k] = withoutSeconds(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutSeconds(e)
		}
	}
	return v
}

// A model file records how the data was prepared: vi estimate --model
// prepares it so without the flags, and refuses other settings.
func TestModelFileKeepsPreparation(t *testing.T) {
	dir := t.TempDir()
	yourDataCSV(t, filepath.Join(dir, "f.csv"))
	prep := []string{"--target", "y", "--missing", "impute", "--drop", "id", "--categorical", "zone", "--backend", "linear"}
	viOK(t, dir, append([]string{"train", "--data", "f.csv", "--out", "m.vimodel"}, prep...)...)
	direct := viOK(t, dir, append([]string{"estimate", "--data", "f.csv", "--estimators", "lazy", "--format", "csv"}, prep...)...)
	saved := viOK(t, dir, "estimate", "--data", "f.csv", "--model", "m.vimodel", "--estimators", "lazy", "--format", "csv")
	if cut := func(s string) string { return dropColumn(s, "seconds") }; cut(direct) != cut(saved) {
		t.Errorf("--model run:\n%s\nwant the run's:\n%s", saved, direct)
	}
	_, stderr, code := vi(t, dir, "estimate", "--data", "f.csv", "--model", "m.vimodel", "--missing", "drop")
	if code != 2 || !strings.Contains(stderr, "--missing drop differs from the model's impute") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// dropColumn removes the named column from CSV text.
func dropColumn(csv, name string) string {
	lines := strings.Split(csv, "\n")
	col := -1
	for j, h := range strings.Split(lines[0], ",") {
		if h == name {
			col = j
		}
	}
	if col < 0 {
		return csv
	}
	for i, l := range lines {
		if f := strings.Split(l, ","); len(f) > col {
			lines[i] = strings.Join(append(f[:col:col], f[col+1:]...), ",")
		}
	}
	return strings.Join(lines, "\n")
}

// A mistyped flag gets the nearest one.
func TestMistypedFlagSuggestion(t *testing.T) {
	_, stderr, code := vi(t, t.TempDir(), "estimate", "--estimator", "lazy")
	if code != 2 || !strings.Contains(stderr, "did you mean --estimators?") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// vi roar removes the file's columns, an encoded column's indicators
// together: at most 4 units (x1, noise, region, zone) of 12 columns.
func TestRoarRemovesFileColumns(t *testing.T) {
	dir := t.TempDir()
	yourDataCSV(t, filepath.Join(dir, "f.csv"))
	out := viOK(t, dir, "roar", "--data", "f.csv", "--target", "y", "--missing", "impute", "--drop", "id",
		"--categorical", "zone", "--backend", "linear", "--estimators", "lazy", "--format", "csv")
	most := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		var removed int
		if _, err := fmt.Sscanf(strings.Split(line, ",")[2], "%d", &removed); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		most = max(most, removed)
	}
	if most != 4 {
		t.Errorf("at most %d units removed, want the 4 columns of the file:\n%s", most, out)
	}
}
