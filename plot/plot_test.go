package plot

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/workflows/roar"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// plotCase is a plot drawn from a report of testdata/plots (real runs:
// vi estimate on the interaction setting, vi shapley with lazy and
// retrain on the linear one, vi roar).
type plotCase struct {
	name string
	draw func(w *bytes.Buffer, format string) error
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func plotCases(t *testing.T) []plotCase {
	var est pipeline.Report
	readJSON(t, filepath.Join("testdata", "plots", "estimate.json"), &est)
	var sh shapley.Report
	readJSON(t, filepath.Join("testdata", "plots", "shapley.json"), &sh)
	var ro roar.Report
	readJSON(t, filepath.Join("testdata", "plots", "roar.json"), &ro)
	// Many features with long names: the row cap and the labels' room.
	var wide pipeline.Report
	wide.Measure, wide.Backend, wide.Level, wide.NEval = "accuracy", "mlp", 0.9, 500
	for i := range 60 {
		for j, e := range []string{"lazy", "dropout", "retrain", "lazy-es"} {
			v := float64(i%17)/100 - 0.02 + float64(j)/500
			wide.Results = append(wide.Results, inference.Result{Feature: "a_rather_long_feature_name_" + string(rune('a'+i%26)) + strings.Repeat("x", i/26),
				Estimator: e, VI: v, CILow: v - 0.03, CIHigh: v + 0.03})
		}
	}
	return []plotCase{
		{"estimate", func(w *bytes.Buffer, f string) error { return Forest(&est, "y").Write(w, f) }},
		{"shapley", func(w *bytes.Buffer, f string) error { return Shapley(&sh, "y").Write(w, f) }},
		{"roar", func(w *bytes.Buffer, f string) error { return ROAR(&ro, "y").Write(w, f) }},
		{"wide", func(w *bytes.Buffer, f string) error { return Forest(&wide, "label").Write(w, f) }},
	}
}

// TestPlots draws each plot in every format: a PNG at least 800 pixels
// wide whose outer border (inside the margin that writeStyledPlot leaves)
// is blank, so that no text or mark ran off the image; SVG and PDF files
// that are what they say. With LAZYVI_PLOT_DIR set, the PNGs are written
// there to be looked at.
func TestPlots(t *testing.T) {
	dir := os.Getenv("LAZYVI_PLOT_DIR")
	for _, tc := range plotCases(t) {
		for _, format := range Formats {
			var buf bytes.Buffer
			if err := tc.draw(&buf, format); err != nil {
				t.Fatalf("%s %s: %v", tc.name, format, err)
			}
			magic := map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"}[format]
			if !bytes.HasPrefix(buf.Bytes(), []byte(magic)) {
				t.Errorf("%s %s starts with %q", tc.name, format, buf.Bytes()[:min(8, buf.Len())])
			}
			if format != "png" {
				continue
			}
			img, err := png.Decode(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			b := img.Bounds()
			if b.Dx() < 800 {
				t.Errorf("%s: %d px wide, want at least 800", tc.name, b.Dx())
			}
			if x, y, ok := inkOnBorder(img, 8); ok {
				t.Errorf("%s: ink at (%d, %d), within 8 px of the edge of a %dx%d image: something is clipped", tc.name, x, y, b.Dx(), b.Dy())
			}
			if dir != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.name+".png"), buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// inkOnBorder returns a pixel within d of img's edge that is not white.
func inkOnBorder(img image.Image, d int) (int, int, bool) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if x >= b.Min.X+d && x < b.Max.X-d && y >= b.Min.Y+d && y < b.Max.Y-d {
				continue
			}
			if c := color.GrayModel.Convert(img.At(x, y)).(color.Gray); c.Y < 250 {
				return x, y, true
			}
		}
	}
	return 0, 0, false
}

// TestForestOrder: rows follow the first estimator's value, not a mean
// over estimators (dropout's inflated VI on a correlated feature would
// otherwise lift it), a feature without a finite first value ranked by the
// next estimator, after the others.
func TestForestOrder(t *testing.T) {
	nan := math.NaN()
	pts := []forestPoint{
		{Feature: "a", Estimator: "lazy", Value: 0.5},
		{Feature: "b", Estimator: "lazy", Value: 0.77},
		{Feature: "c", Estimator: "lazy", Value: 0.1},
		{Feature: "d", Estimator: "lazy", Value: nan},
		{Feature: "a", Estimator: "dropout", Value: 3.0},
		{Feature: "b", Estimator: "dropout", Value: 0.8},
		{Feature: "c", Estimator: "dropout", Value: 0.1},
		{Feature: "d", Estimator: "dropout", Value: 9},
		{Feature: "a", Estimator: "retrain", Value: 0.6},
		{Feature: "b", Estimator: "retrain", Value: 0.89},
	}
	ests, feats := forestOrder(pts)
	if got, want := strings.Join(ests, ","), "lazy,dropout,retrain"; got != want {
		t.Errorf("estimators %s, want %s", got, want)
	}
	if got, want := strings.Join(feats, ","), "b,a,c,d"; got != want {
		t.Errorf("rows %s, want %s", got, want)
	}
}

// TestForestXRange: the x range leaves a blank margin beyond every
// interval end and keeps zero, so that no cap meets the plot's edge.
func TestForestXRange(t *testing.T) {
	pts := []forestPoint{
		{Value: 4.2, Low: 3.5, High: 4.9},
		{Value: 0.1, Low: -0.3, High: 0.4},
		{Value: math.NaN(), Low: math.Inf(-1), High: math.Inf(1)},
	}
	lo, hi := forestXRange(pts)
	span := 4.9 - -0.3
	if lo > -0.3-0.04*span || hi < 4.9+0.04*span {
		t.Errorf("x range [%g, %g] leaves less than 4%% of %g beyond [-0.3, 4.9]", lo, hi, span)
	}
	lo, hi = forestXRange([]forestPoint{{Value: 2, Low: 1, High: 3}})
	if lo >= 0 || hi <= 3 {
		t.Errorf("x range [%g, %g], want 0 and 3 inside", lo, hi)
	}
}
