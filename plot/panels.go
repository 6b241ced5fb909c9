package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The size of one panel of a Panels figure, its legend aside.
const (
	panelWidth  = 5 * vg.Inch
	panelHeight = 4.2 * vg.Inch
	// panelGap is the blank space between a panel's legend and the next
	// panel.
	panelGap = 0.3 * vg.Inch
)

// NewPanel returns a panel for a Panels figure, in the style of the other
// figures: their fonts and sizes, a light grid and a legend in their font.
// Series drawn on it take their colours and marker shapes from
// SeriesStyle.
func NewPanel(title, xLabel, yLabel string) *gplot.Plot {
	p := newStyledPlot(title, xLabel, yLabel)
	grid := plotter.NewGrid()
	grid.Horizontal.Color, grid.Vertical.Color = gridColor, gridColor
	p.Add(grid)
	p.Legend = newStyledLegend()
	p.X.Tick.Marker = niceTicks{n: 6}
	p.Y.Tick.Marker = niceTicks{n: 6}
	return p
}

// SeriesStyle returns the colour and marker shape of the i-th series of a
// figure (cycling after eight): the Okabe-Ito colours, each with a shape of
// its own, as the forest plots draw their estimators.
func SeriesStyle(i int) (color.Color, draw.GlyphDrawer) {
	s := styleOf(i)
	return s.color, s.shape
}

// The line width and marker radius of a Panels figure's series: the
// forest plots' own.
const (
	SeriesLineWidth vg.Length = intervalWidth
	SeriesRadius    vg.Length = markerRadius
)

// Panels is a figure of panels (from NewPanel) side by side, each with its
// legend in a column of its own to its right, never over its data.
func Panels(panels []*gplot.Plot) Figure {
	return Figure{func(w io.Writer, format string) error { return writePanels(w, panels, format) }}
}

// writePanels draws panels side by side in format, each panel's legend
// entries to its right; the panels' legends are restored when it returns,
// so that a figure can be drawn again.
func writePanels(w io.Writer, panels []*gplot.Plot, format string) error {
	if len(panels) == 0 {
		return fmt.Errorf("plot: no panels to draw")
	}
	legends := make([]gplot.Legend, len(panels))
	widths := make([]vg.Length, len(panels))
	width, height := 2*plotMargin, panelHeight
	for i, p := range panels {
		legends[i] = p.Legend
		legends[i].Top, legends[i].Left = true, true
		size := legends[i].Rectangle(draw.Canvas{}).Size()
		widths[i] = size.X
		width += panelWidth + size.X
		if i > 0 {
			width += panelGap
		}
		if size.X > 0 {
			width += panelGap / 2
		}
		height = max(height, size.Y+vg.Inch)
	}
	height += 2 * plotMargin
	c, area, err := newCanvas(width, height, format)
	if err != nil {
		return err
	}
	x := area.Min.X
	for i, p := range panels {
		tile := area
		tile.Min.X, tile.Max.X = x, x+panelWidth
		x += panelWidth
		if widths[i] > 0 {
			leg := area
			leg.Min.X, leg.Max.X = x+panelGap/2, x+panelGap/2+widths[i]
			legends[i].Draw(belowTitle(leg, p))
			x += panelGap/2 + widths[i]
		}
		x += panelGap
		kept, xr, yr := p.Legend, [2]float64{p.X.Min, p.X.Max}, [2]float64{p.Y.Min, p.Y.Max}
		p.Legend = gplot.NewLegend()
		padAxis(&p.X)
		padAxis(&p.Y)
		p.Draw(tile)
		p.Legend = kept
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xr[0], xr[1], yr[0], yr[1]
	}
	_, err = c.WriteTo(w)
	return err
}

// panelPad is the blank share of a linear axis' range left beyond its
// data on each side, so that no marker or error bar meets a panel's edge.
const panelPad = 0.04

// padAxis widens an axis' range by panelPad of it on each side: of its
// span on a linear axis, of its ratio on a logarithmic one.
func padAxis(ax *gplot.Axis) {
	switch ax.Scale.(type) {
	case gplot.LinearScale:
		if span := ax.Max - ax.Min; span > 0 && !math.IsInf(span, 0) {
			ax.Min -= panelPad * span
			ax.Max += panelPad * span
		}
	case gplot.LogScale:
		if ax.Min > 0 && ax.Max > ax.Min && !math.IsInf(ax.Max, 0) {
			f := math.Pow(ax.Max/ax.Min, panelPad)
			ax.Min, ax.Max = ax.Min/f, ax.Max*f
		}
	}
}
