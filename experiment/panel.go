package experiment

import (
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	viplot "github.com/lazyvi/lazyvi/plot"
)

// drawPanels draws plots side by side in format (svg, png or pdf), in the
// style of vi's other figures, each legend beside its panel.
func drawPanels(w io.Writer, plots []*plot.Plot, format string) error {
	return viplot.Panels(plots).Write(w, format)
}

// newPanel returns a panel with a title, axis labels and a grid, in the
// style of vi's other figures.
func newPanel(title, x, y string) *plot.Plot {
	return viplot.NewPanel(title, x, y)
}

// series is one labelled set of points of a panel.
type series struct {
	label string
	pts   plotter.XYs
}

// addScatter adds each series as points, in its own colour and shape.
func addScatter(p *plot.Plot, ss []series) error {
	for i, s := range ss {
		if len(s.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(s.pts)
		if err != nil {
			return err
		}
		sc.Color, sc.Shape = viplot.SeriesStyle(i)
		sc.Radius = viplot.SeriesRadius
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}
	return nil
}

// addLines adds each series as a line with points and, where sd is given
// (same length), error bars of one sd.
func addLines(p *plot.Plot, ss []series, sd [][]float64) error {
	for i, s := range ss {
		if len(s.pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(s.pts)
		if err != nil {
			return err
		}
		sc.Color, sc.Shape = viplot.SeriesStyle(i)
		sc.Radius = viplot.SeriesRadius
		l.Color, l.Width = sc.Color, viplot.SeriesLineWidth
		p.Add(l, sc)
		p.Legend.Add(s.label, l, sc)
		if sd != nil && len(sd[i]) == len(s.pts) {
			errs := make(plotter.YErrors, len(sd[i]))
			for k, v := range sd[i] {
				errs[k].Low, errs[k].High = v, v
			}
			eb, err := plotter.NewYErrorBars(struct {
				plotter.XYer
				plotter.YErrorer
			}{s.pts, errs})
			if err != nil {
				return err
			}
			eb.Color, eb.Width = sc.Color, viplot.SeriesLineWidth/2
			p.Add(eb)
		}
	}
	return nil
}

// addReference adds a dotted grey line through pts (a theory's curve or a
// target level).
func addReference(p *plot.Plot, label string, pts plotter.XYs) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color, l.Width = color.Gray{Y: 90}, viplot.SeriesLineWidth*2/3
	l.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(l)
	if label != "" {
		p.Legend.Add(label, l)
	}
	return nil
}

// barPanel draws grouped bars: one group per category, one bar per name
// (vals[name][category]), in the series' colours.
func barPanel(title, ylabel string, cats, names []string, vals [][]float64) (*plot.Plot, error) {
	p := newPanel(title, "", ylabel)
	w := vg.Points(float64(40 / max(len(names), 1)))
	for i, n := range names {
		b, err := plotter.NewBarChart(plotter.Values(vals[i]), w)
		if err != nil {
			return nil, err
		}
		b.Color, _ = viplot.SeriesStyle(i)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(names)-1)/2)
		p.Add(b)
		p.Legend.Add(n, b)
	}
	p.NominalX(cats...)
	return p, nil
}
