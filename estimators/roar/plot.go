package roar

import (
	"fmt"
	"image/color"
	"io"
	"sort"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlotFormats are the formats WritePlot draws.
var PlotFormats = []string{"png", "svg"}

// WritePlot draws the measure against the fraction removed, one line per
// estimator and ordering (solid for grad, dashed for random) with a band
// of the report's level interval (score ± z se), and the full model's score
// at fraction 0 as every line's start; format is png or svg.
func WritePlot(w io.Writer, rep *Report, format string) error {
	format = strings.ToLower(format)
	if format != "png" && format != "svg" {
		return fmt.Errorf("plot format %q (want png or svg)", format)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("ROAR: %s (%s backend)", rep.Measure, rep.Backend)
	p.X.Label.Text = "fraction of features removed"
	p.Y.Label.Text = rep.Measure
	// A loss is drawn as the loss (mse, logloss: lower is better), other
	// measures as they are.
	shown := func(score float64) float64 { return framework.Readable(rep.Measure, score) }
	p.Legend.Top = true
	p.Legend.Left = false
	z := distuv.UnitNormal.Quantile(0.5 + rep.Level/2)

	type key struct{ est, ord string }
	curves := map[key][]Result{}
	var keys []key
	var estOrder []string
	for _, r := range rep.Results {
		k := key{r.Estimator, r.Ordering}
		if _, ok := curves[k]; !ok {
			keys = append(keys, k)
		}
		curves[k] = append(curves[k], r)
		found := false
		for _, e := range estOrder {
			found = found || e == r.Estimator
		}
		if !found {
			estOrder = append(estOrder, r.Estimator)
		}
	}
	colorOf := func(est string) color.Color {
		for i, e := range estOrder {
			if e == est {
				return plotutil.Color(i)
			}
		}
		return color.Black
	}
	for _, k := range keys {
		rs := curves[k]
		sort.Slice(rs, func(a, b int) bool { return rs[a].Fraction < rs[b].Fraction })
		line := make(plotter.XYs, 0, len(rs)+1)
		band := make(plotter.XYs, 0, 2*len(rs)+2)
		line = append(line, plotter.XY{X: 0, Y: shown(rep.Full.Score)})
		for _, r := range rs {
			line = append(line, plotter.XY{X: r.Fraction, Y: shown(r.Score)})
		}
		band = append(band, plotter.XY{X: 0, Y: shown(rep.Full.Score + z*rep.Full.SE)})
		for _, r := range rs {
			band = append(band, plotter.XY{X: r.Fraction, Y: shown(r.Score + z*r.SE)})
		}
		for i := len(rs) - 1; i >= 0; i-- {
			band = append(band, plotter.XY{X: rs[i].Fraction, Y: shown(rs[i].Score - z*rs[i].SE)})
		}
		band = append(band, plotter.XY{X: 0, Y: shown(rep.Full.Score - z*rep.Full.SE)})
		c := colorOf(k.est)
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return err
		}
		r, g, b, _ := c.RGBA()
		poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
		poly.LineStyle.Width = 0
		l, sc, err := plotter.NewLinePoints(line)
		if err != nil {
			return err
		}
		l.Color, sc.Color = c, c
		l.Width = vg.Points(1.5)
		sc.Shape = draw.CircleGlyph{}
		if k.ord == "random" {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(poly, l, sc)
		p.Legend.Add(k.est+" ("+k.ord+")", l)
	}
	p.X.Min, p.X.Max = 0, 1
	p.Add(plotter.NewGrid())
	wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
