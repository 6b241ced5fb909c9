package plot

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// TestPanelsLegendBeside: a panel's legend is drawn beside it, never over
// its data: the panel's pixels are the same with and without legend
// entries, the legend only widening the figure; drawing twice gives the
// same figure (the legends are restored).
func TestPanelsLegendBeside(t *testing.T) {
	draw := func(legend bool) []byte {
		p := NewPanel("a panel", "x", "y")
		var ss []*plotter.Scatter
		for i := range 3 {
			pts := plotter.XYs{}
			for k := range 20 {
				pts = append(pts, plotter.XY{X: float64(k), Y: float64((k*(i+3))%11) + float64(i)})
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				t.Fatal(err)
			}
			sc.Color, sc.Shape = SeriesStyle(i)
			p.Add(sc)
			ss = append(ss, sc)
		}
		if legend {
			for i, sc := range ss {
				p.Legend.Add([]string{"first series", "second", "third"}[i], sc)
			}
		}
		var buf bytes.Buffer
		if err := Panels(nil).Write(&buf, "png"); err == nil {
			t.Error("Panels(nil): want an error")
		}
		fig := Panels(append([]*gplot.Plot{p}, p))
		if err := fig.Write(&buf, "png"); err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := fig.Write(&again, "png"); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Error("the figure drawn twice differs")
		}
		return buf.Bytes()
	}
	with, err := png.Decode(bytes.NewReader(draw(true)))
	if err != nil {
		t.Fatal(err)
	}
	without, err := png.Decode(bytes.NewReader(draw(false)))
	if err != nil {
		t.Fatal(err)
	}
	if with.Bounds().Dx() <= without.Bounds().Dx() || with.Bounds().Dy() != without.Bounds().Dy() {
		t.Fatalf("with legends %v, without %v: want a wider figure of the same height", with.Bounds(), without.Bounds())
	}
	// The first panel's column: the margin and the panel.
	cols := int((plotMargin + panelWidth).Dots(plotDPI))
	for y := 0; y < with.Bounds().Dy(); y++ {
		for x := 0; x < cols; x++ {
			if with.At(x, y) != without.At(x, y) {
				t.Fatalf("pixel (%d, %d) of the first panel differs with a legend: the legend is drawn over the panel", x, y)
			}
		}
	}
	if x, y, ok := inkOnBorder(with, 8); ok {
		t.Errorf("ink at (%d, %d), within 8 px of the edge", x, y)
	}
}

// Tick labels carry the decimals their step needs and no more: steps of
// 2.5 and 0.25 one more than their power of ten, 25 and 250 none.
func TestTickLabels(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 1300, "0 250 500 750 1000 1250"},
		{0, 130000, "0 25000 50000 75000 100000 125000"},
		{0, 13, "0 2.5 5.0 7.5 10.0 12.5"},
		{0, 1.3, "0 0.25 0.50 0.75 1.00 1.25"},
		{-0.3, 0.3, "-0.3 -0.2 -0.1 0 0.1 0.2 0.3"},
	} {
		var got []string
		for _, tk := range (niceTicks{n: 6}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("ticks of [%g, %g]: %s, want %s", tc.lo, tc.hi, s, tc.want)
		}
	}
}

// padAxis leaves blank beyond the data on linear and logarithmic axes.
func TestPadAxis(t *testing.T) {
	lin := gplot.Axis{Min: 0, Max: 10, Scale: gplot.LinearScale{}}
	padAxis(&lin)
	if lin.Min >= 0 || lin.Max <= 10 {
		t.Errorf("linear [0, 10] padded to [%g, %g]", lin.Min, lin.Max)
	}
	log := gplot.Axis{Min: 0.01, Max: 1, Scale: gplot.LogScale{}}
	padAxis(&log)
	if log.Min >= 0.01 || log.Min <= 0 || log.Max <= 1 {
		t.Errorf("logarithmic [0.01, 1] padded to [%g, %g]", log.Min, log.Max)
	}
}
