package plot

import (
	"fmt"
	"io"
	"slices"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lazyvi/lazyvi/workflows/roar"
)

// roarCurves is the plot of a vi roar report: the measure on the
// evaluation rows against the share of features removed, one line per
// estimator (colour and marker) and ordering (solid grad, dashed random),
// each from the full model's score at 0, with its interval as a vertical
// bar at each point (the estimators' points at one fraction a little apart).
// A loss (mse, logloss) is drawn as itself, smaller being better, not as
// the report's larger-is-better score.
type roarCurves struct {
	rep    *roar.Report
	target string
}

func roarPlot(rep *roar.Report, target string) roarCurves { return roarCurves{rep, target} }

// roarDodge is how far apart (in fraction removed) the estimators' points
// at one fraction are drawn, so that curves that coincide stay visible.
const roarDodge = 0.012

func (rc roarCurves) write(w io.Writer, format string) error {
	rep := rc.rep
	if len(rep.Results) == 0 {
		return fmt.Errorf("plot: no results to draw")
	}
	words := wordsOf(rep.Measure)
	value := func(score float64) float64 { return score }
	better := "higher is better"
	if words.loss {
		value = func(score float64) float64 { return -score }
		better = "lower is better"
	}
	var ests, ords []string
	for _, r := range rep.Results {
		if !slices.Contains(ests, r.Estimator) {
			ests = append(ests, r.Estimator)
		}
		if !slices.Contains(ords, r.Ordering) {
			ords = append(ords, r.Ordering)
		}
	}
	p := newStyledPlot(
		fmt.Sprintf("ROAR: %s as features are removed (%s, n_eval %d)", words.what, rep.Backend, rep.NEval),
		roarXLabel(ords),
		fmt.Sprintf("%s on held-out rows\n(%s%s)", words.what, words.unitsIn(rc.target), better))
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	p.Add(grid)
	z := distuv.UnitNormal.Quantile(0.5 + rep.Level/2)
	leg := newStyledLegend()
	var lines []gplot.Plotter
	for e, est := range ests {
		st := styleOf(e)
		dx := (float64(e) - float64(len(ests)-1)/2) * roarDodge
		for o, ord := range ords {
			var rs []roar.Result
			for _, r := range rep.Results {
				if r.Estimator == est && r.Ordering == ord {
					rs = append(rs, r)
				}
			}
			if len(rs) == 0 {
				continue
			}
			sort.Slice(rs, func(a, b int) bool { return rs[a].Fraction < rs[b].Fraction })
			pts := plotter.XYs{{X: dx, Y: value(rep.Full.Score)}}
			errs := plotter.YErrors{{Low: z * rep.Full.SE, High: z * rep.Full.SE}}
			for _, r := range rs {
				pts = append(pts, plotter.XY{X: r.Fraction + dx, Y: value(r.Score)})
				errs = append(errs, struct{ Low, High float64 }{z * r.SE, z * r.SE})
			}
			bars, err := plotter.NewYErrorBars(yErrorPoints{pts, errs})
			if err != nil {
				return err
			}
			bars.LineStyle = draw.LineStyle{Color: st.color, Width: vg.Points(1.5)}
			bars.CapWidth = vg.Points(6)
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return err
			}
			l.Color, l.Width = st.color, vg.Points(2.2)
			l.Dashes = orderingDashes(o)
			sc.Color, sc.Shape, sc.Radius = st.color, st.shape, vg.Points(markerRadius)
			lines = append(lines, bars, l, sc)
			name := est
			if est == "retrain" {
				name = "retrain (ROAR)"
			}
			if len(ords) > 1 {
				name += ", " + ord + " order"
			}
			leg.Add(name, l, sc)
		}
	}
	p.Add(lines...)
	p.X.Min, p.X.Max = -0.03, 1.03
	p.Y.Tick.Marker = niceTicks{n: 7}
	if words.loss {
		p.Y.Min = 0 // a loss is at least 0: the curve's rise at its scale
	}
	p.X.Tick.Marker = gplot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 0.25, Label: "0.25"},
		{Value: 0.5, Label: "0.5"}, {Value: 0.75, Label: "0.75"}, {Value: 1, Label: "1"}}
	return writeStyledPlot(w, p, &leg, 10*vg.Inch, 6*vg.Inch, format)
}

// roarXLabel labels the fraction axis by the orderings drawn.
func roarXLabel(ords []string) string {
	if len(ords) == 1 && ords[0] == "grad" {
		return "share of the features removed (largest mean |gradient| first)"
	}
	if len(ords) == 1 {
		return "share of the features removed (in " + ords[0] + " order)"
	}
	return "share of the features removed (in each ordering's order)"
}

// orderingDashes is the dash pattern of the o-th ordering: solid, dashed,
// dotted.
func orderingDashes(o int) []vg.Length {
	switch o % 3 {
	case 1:
		return []vg.Length{vg.Points(8), vg.Points(4)}
	case 2:
		return []vg.Length{vg.Points(2), vg.Points(3)}
	}
	return nil
}

// yErrorPoints are points with their vertical error bars, for
// plotter.NewYErrorBars.
type yErrorPoints struct {
	plotter.XYs
	plotter.YErrors
}
