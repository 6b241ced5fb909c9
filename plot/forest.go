package plot

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// forestPoint is one estimate of a forest plot: a feature's value under
// one estimator, with its interval.
type forestPoint struct {
	Feature, Estimator string
	Value, Low, High   float64
}

// maxForestRows is the most features a forest plot shows: the most
// important ones, the title saying how many were left out.
const maxForestRows = 40

// forestPlot is a forest plot: one row per feature, the most important at
// the top by the first estimator's value (the first estimator of points:
// the first one asked), a point and an interval per estimator within the
// row, a line at zero. The y axis says what orders the rows.
type forestPlot struct {
	title, xLabel string
	// value names what the points are ("VI", "Shapley value"), for the
	// title's statement of the order.
	value  string
	points []forestPoint
	// notes are lines of text under the legend's entries.
	notes []string
}

// write draws the plot in format (png, svg or pdf).
func (f forestPlot) write(w io.Writer, format string) error {
	ests, feats := forestOrder(f.points)
	if len(feats) == 0 {
		return fmt.Errorf("plot: no results to draw")
	}
	title := f.title
	if len(feats) > maxForestRows {
		title = fmt.Sprintf("%s: the %d most important of %d", title, maxForestRows, len(feats))
		feats = feats[:maxForestRows]
	}
	n, k := len(feats), len(ests)
	row := make(map[string]int, n)
	for i, feat := range feats {
		row[feat] = i
	}
	// Row i (0 the most important) is centred on y = n-1-i; the
	// estimators share it top to bottom in legend order.
	step := math.Min(0.8/float64(k), 0.25)
	yOf := func(feat string, e int) float64 {
		return float64(n-1-row[feat]) + (float64(k-1)/2-float64(e))*step
	}

	p := newStyledPlot(title+"\n"+forestOrderLine(f.value, ests[0]), f.xLabel, "")
	p.Add(rowBands{rows: n})
	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = gridColor
	p.Add(grid, zeroLine{})
	leg := newStyledLegend()
	var shown []forestPoint
	for e, est := range ests {
		s := &intervalSeries{style: styleOf(e)}
		for _, pt := range f.points {
			if _, ok := row[pt.Feature]; !ok || pt.Estimator != est {
				continue
			}
			s.points = append(s.points, pt)
			s.ys = append(s.ys, yOf(pt.Feature, e))
		}
		shown = append(shown, s.points...)
		p.Add(s)
		leg.Add(est, s)
	}
	if len(f.notes) > 0 {
		leg.Add("")
		for _, note := range f.notes {
			leg.Add(note)
		}
	}
	ticks := make(gplot.ConstantTicks, n)
	for i, feat := range feats {
		ticks[i] = gplot.Tick{Value: float64(n - 1 - i), Label: feat}
	}
	p.Y.Tick.Marker = ticks
	p.Y.Tick.Length = 0
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	p.Y.Padding = 0
	p.X.Min, p.X.Max = forestXRange(shown)
	p.X.Tick.Marker = niceTicks{n: 7}

	perRow := math.Max(0.36, 0.2*float64(k))
	height := vg.Length(1.9+perRow*float64(n)) * vg.Inch
	return writeStyledPlot(w, p, &leg, 10*vg.Inch, height, format)
}

// forestOrderLine says what orders a forest plot's rows, for the title's
// second line.
func forestOrderLine(value, first string) string {
	if value == "" {
		value = "value"
	}
	return fmt.Sprintf("rows sorted by %s's %s, largest at the top", first, value)
}

// forestOrder returns the estimators in their order of first appearance
// and the features sorted by the first estimator's value, largest first;
// a feature without a finite value under it is ranked by the next
// estimator that has one, after those that have, and ties keep the
// features' order of appearance.
func forestOrder(points []forestPoint) (ests, feats []string) {
	value := map[[2]string]float64{}
	for _, pt := range points {
		if !slices.Contains(ests, pt.Estimator) {
			ests = append(ests, pt.Estimator)
		}
		if !slices.Contains(feats, pt.Feature) {
			feats = append(feats, pt.Feature)
		}
		if finite(pt.Value) {
			value[[2]string{pt.Feature, pt.Estimator}] = pt.Value
		}
	}
	// key ranks a feature: the index of the first estimator with a finite
	// value (len(ests) for none) and that value.
	key := func(feat string) (int, float64) {
		for e, est := range ests {
			if v, ok := value[[2]string{feat, est}]; ok {
				return e, v
			}
		}
		return len(ests), 0
	}
	sort.SliceStable(feats, func(a, b int) bool {
		ea, va := key(feats[a])
		eb, vb := key(feats[b])
		if ea != eb {
			return ea < eb
		}
		return va > vb
	})
	return ests, feats
}

// forestMargin is the blank share of the x range left on each side of the
// drawn points and intervals, so that no interval's cap meets the plot's
// edge.
const forestMargin = 0.05

// forestXRange returns the x range of a forest plot: every finite value
// and interval end of points, and zero, with forestMargin of the span
// blank on each side.
func forestXRange(points []forestPoint) (lo, hi float64) {
	lo, hi = 0, 0
	for _, pt := range points {
		for _, v := range []float64{pt.Value, pt.Low, pt.High} {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	span := hi - lo
	if span == 0 {
		span = 1
	}
	return lo - forestMargin*span, hi + forestMargin*span
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// intervalSeries draws one estimator's points, each with its interval as
// a horizontal line with end caps, the interval drawn whatever the point
// (a report's point need not lie inside its interval: a floored interval,
// --ci-truncate, may exclude a negative estimate).
type intervalSeries struct {
	style  seriesStyle
	points []forestPoint
	ys     []float64
}

const (
	intervalWidth = 2.2 // pt
	markerRadius  = 4.5 // pt
)

func (s *intervalSeries) line() draw.LineStyle {
	return draw.LineStyle{Color: s.style.color, Width: vg.Points(intervalWidth)}
}

func (s *intervalSeries) glyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: s.style.color, Shape: s.style.shape, Radius: vg.Points(markerRadius)}
}

// Plot implements gplot.Plotter.
func (s *intervalSeries) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	ls, capH := s.line(), vg.Points(7)
	for i, pt := range s.points {
		y := trY(s.ys[i])
		if finite(pt.Low) && finite(pt.High) {
			lo, hi := trX(pt.Low), trX(pt.High)
			c.StrokeLines(ls, c.ClipLinesX([]vg.Point{{X: lo, Y: y}, {X: hi, Y: y}})...)
			c.StrokeLine2(ls, lo, y-capH/2, lo, y+capH/2)
			c.StrokeLine2(ls, hi, y-capH/2, hi, y+capH/2)
		}
		if finite(pt.Value) {
			c.DrawGlyph(s.glyph(), vg.Point{X: trX(pt.Value), Y: y})
		}
	}
}

// DataRange implements gplot.DataRanger: every finite value and end.
func (s *intervalSeries) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for i, pt := range s.points {
		for _, v := range []float64{pt.Value, pt.Low, pt.High} {
			if finite(v) {
				xmin, xmax = math.Min(xmin, v), math.Max(xmax, v)
			}
		}
		ymin, ymax = math.Min(ymin, s.ys[i]), math.Max(ymax, s.ys[i])
	}
	return xmin, xmax, ymin, ymax
}

// GlyphBoxes implements gplot.GlyphBoxer, so that no marker is clipped.
func (s *intervalSeries) GlyphBoxes(p *gplot.Plot) []gplot.GlyphBox {
	r := vg.Points(markerRadius + intervalWidth)
	box := vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}}
	var out []gplot.GlyphBox
	for i, pt := range s.points {
		for _, v := range []float64{pt.Value, pt.Low, pt.High} {
			if finite(v) {
				out = append(out, gplot.GlyphBox{X: p.X.Norm(v), Y: p.Y.Norm(s.ys[i]), Rectangle: box})
			}
		}
	}
	return out
}

// Thumbnail implements gplot.Thumbnailer: the interval and the marker.
func (s *intervalSeries) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(s.line(), c.Min.X, y, c.Max.X, y)
	c.DrawGlyph(s.glyph(), c.Center())
}

// rowBands shades every other row of a plot whose rows are centred on
// y = 0, 1, ..., rows-1, so that the eye follows a row across.
type rowBands struct{ rows int }

// Plot implements gplot.Plotter.
func (b rowBands) Plot(c draw.Canvas, p *gplot.Plot) {
	_, trY := p.Transforms(&c)
	c.SetColor(zebraFill)
	for y := b.rows - 1; y >= 0; y -= 2 {
		lo, hi := trY(float64(y)-0.5), trY(float64(y)+0.5)
		var path vg.Path
		path.Move(vg.Point{X: c.Min.X, Y: lo})
		path.Line(vg.Point{X: c.Max.X, Y: lo})
		path.Line(vg.Point{X: c.Max.X, Y: hi})
		path.Line(vg.Point{X: c.Min.X, Y: hi})
		path.Close()
		c.Fill(path)
	}
}

// zeroLine draws the vertical line x = 0 across the plot, and keeps 0 in
// the x range.
type zeroLine struct{}

// Plot implements gplot.Plotter.
func (zeroLine) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(0)
	c.StrokeLine2(draw.LineStyle{Color: zeroColor, Width: vg.Points(1.5)}, x, c.Min.Y, x, c.Max.Y)
}

// DataRange implements gplot.DataRanger: x = 0 only.
func (zeroLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return 0, 0, math.Inf(1), math.Inf(-1)
}
