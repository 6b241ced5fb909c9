package plot

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/bench"
)

func TestSpeed(t *testing.T) {
	e1, e2 := 0.02, 0.15
	run := func(n int, lazy float64) bench.Report {
		return bench.Report{Case: "linear", N: n, P: 6, Width: "50", Results: []bench.Result{
			{Estimator: "lazy", Features: 6, SecondsPerFeature: lazy, ErrorMean: &e1, ErrorAgainst: "truth"},
			{Estimator: "dropout", Features: 6, SecondsPerFeature: 0.001, ErrorMean: &e2, ErrorAgainst: "truth"},
		}}
	}
	for i, tc := range []struct {
		runs  []bench.Report
		width int // pixels: one 5-inch panel, two for a sweep
	}{
		{[]bench.Report{run(1000, 0.1)}, 5 * 96},
		{[]bench.Report{run(500, 0.05), run(1000, 0.1)}, 10 * 96},
	} {
		var buf bytes.Buffer
		if err := Speed(tc.runs).Write(&buf, "png"); err != nil {
			t.Fatalf("Case %d: %v", i, err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("Case %d: not a PNG: %v", i, err)
		}
		if w := img.Bounds().Dx(); w != tc.width {
			t.Errorf("Case %d: width %d px, want %d", i, w, tc.width)
		}
		buf.Reset()
		if err := Speed(tc.runs).Write(&buf, "svg"); err != nil || !strings.Contains(buf.String(), "<svg") {
			t.Errorf("Case %d: svg: %v", i, err)
		}
	}
}
