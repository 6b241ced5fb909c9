package main

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

func TestWriteSpeedPlot(t *testing.T) {
	e1, e2 := 0.02, 0.15
	run := func(n int, lazy float64) speedRun {
		return speedRun{Case: "linear", N: n, P: 6, Width: "50", Results: []speedResult{
			{Estimator: "lazy", Features: 6, SecondsPerFeature: lazy, ErrorMean: &e1, ErrorAgainst: "truth"},
			{Estimator: "dropout", Features: 6, SecondsPerFeature: 0.001, ErrorMean: &e2, ErrorAgainst: "truth"},
		}}
	}
	for i, tc := range []struct {
		runs  []speedRun
		width int // pixels: one 5-inch panel, two for a sweep
	}{
		{[]speedRun{run(1000, 0.1)}, 5 * 96},
		{[]speedRun{run(500, 0.05), run(1000, 0.1)}, 10 * 96},
	} {
		var buf bytes.Buffer
		if err := writeSpeedPlot(&buf, tc.runs, "png"); err != nil {
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
		if err := writeSpeedPlot(&buf, tc.runs, "svg"); err != nil || !strings.Contains(buf.String(), "<svg") {
			t.Errorf("Case %d: svg: %v", i, err)
		}
	}
}
