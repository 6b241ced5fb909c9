package plot

import (
	"fmt"
	"io"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/lazyvi/lazyvi/bench"
)

// Speed is the figure of timing runs (vi bench): seconds per feature against the
// error (one point per estimator and size: the cost-accuracy trade-off) and,
// for a sweep, seconds per feature against the swept size (n, or the run's
// index for a width sweep), one line per estimator (and width, when both
// were swept).
func Speed(runs []bench.Report) Figure {
	return Figure{func(w io.Writer, format string) error { return writeSpeed(w, runs, format) }}
}

func writeSpeed(w io.Writer, runs []bench.Report, format string) error {
	if len(runs) == 0 {
		return fmt.Errorf("plot: no runs to draw")
	}
	var ests []string
	for _, run := range runs {
		for _, r := range run.Results {
			if !slices.Contains(ests, r.Estimator) {
				ests = append(ests, r.Estimator)
			}
		}
	}
	scatter, err := speedScatter(runs, ests)
	if err != nil {
		return err
	}
	plots := []*gplot.Plot{scatter}
	if len(runs) > 1 {
		size, err := speedBySize(runs, ests)
		if err != nil {
			return err
		}
		plots = append(plots, size)
	}

	width, height := vg.Length(len(plots))*5*vg.Inch, 4*vg.Inch
	var c draw.Canvas
	var wt io.WriterTo
	switch format {
	case "svg":
		s := vgsvg.New(width, height)
		c, wt = draw.New(s), s
	case "pdf":
		p := vgpdf.New(width, height)
		c, wt = draw.New(p), p
	default:
		img := vgimg.New(width, height)
		c, wt = draw.New(img), vgimg.PngCanvas{Canvas: img}
	}
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := gplot.Align([][]*gplot.Plot{plots}, tiles, c)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	_, err = wt.WriteTo(w)
	return err
}

// speedScatter is the panel of seconds per feature against the error, one
// point per estimator and run.
func speedScatter(runs []bench.Report, ests []string) (*gplot.Plot, error) {
	scatter := gplot.New()
	scatter.Title.Text = fmt.Sprintf("vi bench %s: cost and error", runs[0].Case)
	scatter.X.Label.Text = "seconds per feature"
	scatter.X.Scale = gplot.LogScale{}
	scatter.X.Tick.Marker = gplot.LogTicks{}
	scatter.Y.Label.Text = "mean |VI - " + errorRef(runs) + "|"
	scatter.Add(plotter.NewGrid())
	scatter.Legend.Top = true
	for i, e := range ests {
		var pts plotter.XYs
		for _, run := range runs {
			for _, r := range run.Results {
				if r.Estimator == e && r.ErrorMean != nil && r.SecondsPerFeature > 0 {
					pts = append(pts, plotter.XY{X: r.SecondsPerFeature, Y: *r.ErrorMean})
				}
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.Color = plotutil.Color(i)
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(4)
		scatter.Add(sc)
		scatter.Legend.Add(e, sc)
	}
	return scatter, nil
}

// speedBySize is the panel of seconds per feature against the swept size.
func speedBySize(runs []bench.Report, ests []string) (*gplot.Plot, error) {
	size := gplot.New()
	size.Title.Text = "cost against size"
	size.Y.Label.Text = "seconds per feature"
	byN := runs[0].N != runs[len(runs)-1].N
	size.X.Label.Text = "run (widths " + widths(runs) + ")"
	if byN {
		size.X.Label.Text = "n"
	}
	size.Add(plotter.NewGrid())
	size.Legend.Top, size.Legend.Left = true, true
	// Against n, one line per estimator and width (dashed by width)
	// when both were swept; against the run's index for a width
	// sweep alone.
	var ws []string
	for _, run := range runs {
		if !slices.Contains(ws, run.Width) {
			ws = append(ws, run.Width)
		}
	}
	if !byN {
		ws = []string{""}
	}
	for i, e := range ests {
		for wi, wd := range ws {
			var pts plotter.XYs
			for k, run := range runs {
				if byN && run.Width != wd {
					continue
				}
				x := float64(k)
				if byN {
					x = float64(run.N)
				}
				for _, r := range run.Results {
					if r.Estimator == e {
						pts = append(pts, plotter.XY{X: x, Y: r.SecondsPerFeature})
					}
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
			l.Dashes = plotutil.Dashes(wi)
			size.Add(l, sc)
			name := e
			if len(ws) > 1 {
				name = fmt.Sprintf("%s (width %s)", e, wd)
			}
			size.Legend.Add(name, l)
		}
	}
	return size, nil
}

func errorRef(runs []bench.Report) string {
	for _, run := range runs {
		for _, r := range run.Results {
			if r.ErrorAgainst != "" {
				return r.ErrorAgainst
			}
		}
	}
	return "reference"
}

func widths(runs []bench.Report) string {
	ws := make([]string, len(runs))
	for i, r := range runs {
		ws[i] = r.Width
	}
	return strings.Join(ws, " | ")
}
