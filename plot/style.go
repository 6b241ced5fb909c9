package plot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/lazyvi/lazyvi/framework"
)

// The figures of estimate, Shapley and ROAR reports share one style, chosen to be
// read projected on a wall or printed in grey: sans-serif text of at least
// 12 pt at the image's natural size, the Okabe-Ito colours (distinct to
// the three common kinds of colour blindness) each paired with its own
// marker shape, so that a series is told apart by shape where colour
// fails, and PNGs at plotDPI.
const (
	plotDPI = 150

	plotTitleSize  = 16 // pt
	plotLabelSize  = 14
	plotTickSize   = 12
	plotLegendSize = 13

	// plotMargin is the blank border around a plot, wide enough for half
	// of an end tick's label, which gonum centres on the tick.
	plotMargin = vg.Length(0.3 * vg.Inch)
)

// Formats are the file formats a figure is written in, named by their
// file extensions.
var Formats = []string{"png", "svg", "pdf"}

// Format returns the format of a figure file, from its extension: png, svg
// or pdf.
func Format(path string) (string, error) {
	f := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if !slices.Contains(Formats, f) {
		return "", framework.Usagef("%s: want a .png, .svg or .pdf file", path)
	}
	return f, nil
}

// seriesStyle is how one series (an estimator) is drawn.
type seriesStyle struct {
	color color.Color
	shape draw.GlyphDrawer
}

// seriesStyles are the Okabe-Ito colours in an order whose neighbours
// differ in lightness too (blue, orange, black, reddish purple, bluish
// green, sky blue, vermillion, yellow), each with a marker shape of its
// own (filled circle, square and triangle, then open ones, a cross and a
// plus).
var seriesStyles = []seriesStyle{
	{color.RGBA{0x00, 0x72, 0xB2, 0xFF}, draw.CircleGlyph{}},
	{color.RGBA{0xE6, 0x9F, 0x00, 0xFF}, draw.BoxGlyph{}},
	{color.RGBA{0x00, 0x00, 0x00, 0xFF}, draw.PyramidGlyph{}},
	{color.RGBA{0xCC, 0x79, 0xA7, 0xFF}, draw.RingGlyph{}},
	{color.RGBA{0x00, 0x9E, 0x73, 0xFF}, draw.SquareGlyph{}},
	{color.RGBA{0x56, 0xB4, 0xE9, 0xFF}, draw.TriangleGlyph{}},
	{color.RGBA{0xD5, 0x5E, 0x00, 0xFF}, draw.CrossGlyph{}},
	{color.RGBA{0xF0, 0xE4, 0x42, 0xFF}, draw.PlusGlyph{}},
}

// styleOf returns the i-th series' style (cycling after eight).
func styleOf(i int) seriesStyle { return seriesStyles[i%len(seriesStyles)] }

var (
	plotFont  = font.Font{Typeface: "Liberation", Variant: "Sans"}
	gridColor = color.Gray{Y: 0xDD}
	zebraFill = color.Gray{Y: 0xF3}
	zeroColor = color.Gray{Y: 0x44}
)

// newStyledPlot returns a plot with the shared fonts and sizes.
func newStyledPlot(title, xLabel, yLabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(plotFont, plotTitleSize)
	p.Title.Padding = vg.Points(8)
	for _, ax := range []*gplot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(plotFont, plotLabelSize)
		ax.Tick.Label.Font = font.From(plotFont, plotTickSize)
		ax.Label.Padding = vg.Points(6)
	}
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	return p
}

// newStyledLegend returns a legend with the shared font, for drawing
// beside a plot (writeStyledPlot) rather than over its data.
func newStyledLegend() gplot.Legend {
	l := gplot.NewLegend()
	l.TextStyle.Font = font.From(plotFont, plotLegendSize)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(28)
	l.Padding = vg.Points(4)
	return l
}

// writeStyledPlot draws p, with leg in a column of its own to the right of
// it (none when leg has no entries), on a width x height canvas inside
// plotMargin, and writes it to w in format (png, svg or pdf).
func writeStyledPlot(w io.Writer, p *gplot.Plot, leg *gplot.Legend, width, height vg.Length, format string) error {
	c, area, err := newCanvas(width, height, format)
	if err != nil {
		return err
	}
	if leg != nil {
		if lw := leg.Rectangle(area).Size().X; lw > 0 {
			gap := vg.Points(12)
			leg.Draw(belowTitle(draw.Crop(area, area.Size().X-lw, 0, 0, 0), p))
			area = draw.Crop(area, 0, -(lw + gap), 0, 0)
		}
	}
	p.Draw(area)
	_, err = c.WriteTo(w)
	return err
}

// newCanvas returns a width x height canvas that writes format (png at
// plotDPI, svg or pdf), and its area inside plotMargin, the whole painted
// white.
func newCanvas(width, height vg.Length, format string) (vg.CanvasWriterTo, draw.Canvas, error) {
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(plotDPI))}
	case "svg":
		c = vgsvg.New(width, height)
	case "pdf":
		c = vgpdf.New(width, height)
	default:
		return nil, draw.Canvas{}, fmt.Errorf("plot format %q (want png, svg or pdf)", format)
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	return c, draw.Crop(dc, plotMargin, -plotMargin, plotMargin, -plotMargin), nil
}

// belowTitle returns the part of area below p's title, so that a legend
// drawn there has its top at the data area's.
func belowTitle(area draw.Canvas, p *gplot.Plot) draw.Canvas {
	if p.Title.Text == "" {
		return area
	}
	return draw.Crop(area, 0, 0, 0, -(p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding))
}

// niceTicks is a gplot.Ticker with about n labelled ticks at round steps
// (1, 2, 2.5 or 5 times a power of ten), more than gonum's default gives,
// so that a value can be read off the axis.
type niceTicks struct{ n int }

// Ticks implements gplot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []gplot.Tick{{Value: lo, Label: tickLabel(lo, 0)}}
	}
	raw := (hi - lo) / float64(max(t.n, 2))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []gplot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		out = append(out, gplot.Tick{Value: v, Label: tickLabel(v, step)})
	}
	return out
}

// tickLabel writes a tick's value with as many decimals as its step needs.
func tickLabel(v, step float64) string {
	if math.Abs(v) < step*1e-9 {
		return "0"
	}
	if step <= 0 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	decimals := max(0, int(math.Ceil(-math.Log10(step)-1e-9)))
	if m := step / math.Pow(10, math.Floor(math.Log10(step))); math.Abs(m-2.5) < 1e-9 && step < 10 {
		decimals++ // 0.25, 2.5; not 25 or 250
	}
	if math.Abs(v) >= 1e6 || (math.Abs(v) < 1e-3 && decimals > 4) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
