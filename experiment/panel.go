package experiment

import (
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// drawPanels draws plots side by side, 4.5 inches each, as svg or png.
func drawPanels(w io.Writer, plots []*plot.Plot, format string) error {
	width, height := vg.Length(len(plots))*4.5*vg.Inch, 4*vg.Inch
	var c draw.Canvas
	var wt io.WriterTo
	if format == "svg" {
		s := vgsvg.New(width, height)
		c, wt = draw.New(s), s
	} else {
		img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))
		c, wt = draw.New(img), vgimg.PngCanvas{Canvas: img}
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, c)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	_, err := wt.WriteTo(w)
	return err
}

// newPanel returns a plot with a title, axis labels and a grid.
func newPanel(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	return p
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
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add(s.label, sc)
	}
	headroom(p)
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
		l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
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
			eb.Color = plotutil.Color(i)
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
	l.Color = color.Gray{Y: 90}
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
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(names)-1)/2)
		p.Add(b)
		p.Legend.Add(n, b)
	}
	p.NominalX(cats...)
	headroom(p)
	return p, nil
}

// headroom raises the panel's top by a third of its range, so that the
// legend in the top corner clears the data.
func headroom(p *plot.Plot) {
	r := p.Y.Max - p.Y.Min
	p.Y.Max += r / 3
	if p.Y.Min < 0 {
		p.Y.Min -= r / 20
	}
}
