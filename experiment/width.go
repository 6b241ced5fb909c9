package experiment

import (
	"fmt"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/simulate"
)

func init() {
	register(&Experiment{
		Name:  "width",
		Short: "Fig. wide: lazy's coverage and time against the network's width",
		Claim: "on the linear setting, the coverage of LazyVI's 95% intervals for the important variables rises with the " +
			"hidden layer's width (50 repetitions), and LazyVI's time rises with it too, staying well below retrain's.",
		Reps: 50,
		run:  runWidth,
	})
}

// widthWidths are the hidden widths width sweeps; widthN its rows.
var widthWidths = []int{8, 16, 32, 64, 128}

const widthN = 1000

func runWidth(x *env) (*Result, error) {
	ests, err := lookupAll("lazy", "retrain")
	if err != nil {
		return nil, err
	}
	feats := []string{"x1", "x2", "x3"}
	out := &Result{Header: []string{"rep", "width", "estimator", "feature", "vi", "ci_low", "ci_high", "truth", "covers", "seconds"}}
	names := []string{"lazy", "retrain"}
	cover := make([][]float64, len(names))
	secs := make([][]float64, len(names))
	for i := range names {
		cover[i], secs[i] = make([]float64, len(widthWidths)), make([]float64, len(widthWidths))
	}
	for k, w := range widthWidths {
		for rep := 0; rep < x.reps; rep++ {
			seed := x.seed + int64(rep)
			x.status(fmt.Sprintf("width: %d, repetition %d/%d", w, rep+1, x.reps))
			sim, err := simulate.Linear(widthN, timeErrorRho, seed)
			if err != nil {
				return nil, err
			}
			res, err := x.estimate(expRun{sim: sim, model: expModel{mlp.Backend{}, "mlp", map[string]string{"hidden": strconv.Itoa(w)}}, ests: ests, features: feats, seed: seed, inference: inference.Plain})
			if err != nil {
				return nil, err
			}
			for i, e := range names {
				for j, f := range feats {
					r := res.get(e, f)
					truth := sim.Truth[j]
					c := r.CILow <= truth && truth <= r.CIHigh
					cover[i][k] += b2f(c) / float64(x.reps*len(feats))
					secs[i][k] += r.Seconds / float64(x.reps*len(feats))
					out.Rows = append(out.Rows, []string{strconv.Itoa(rep), strconv.Itoa(w), e, f, ftoa(r.VI), ftoa(r.CILow), ftoa(r.CIHigh), ftoa(truth), strconv.FormatBool(c), ftoa(r.Seconds)})
				}
			}
		}
	}
	cp := newPanel("coverage of the 95% intervals (x1, x2, x3)", "hidden width", "coverage")
	tp := newPanel("seconds per feature", "hidden width", "seconds")
	var cs, ts []series
	for i, e := range names {
		c, t := series{label: e}, series{label: e}
		for k, w := range widthWidths {
			c.pts = append(c.pts, plotter.XY{X: float64(w), Y: cover[i][k]})
			t.pts = append(t.pts, plotter.XY{X: float64(w), Y: secs[i][k]})
		}
		cs, ts = append(cs, c), append(ts, t)
	}
	if err := addLines(cp, cs, nil); err != nil {
		return nil, err
	}
	if err := addReference(cp, "0.95", plotter.XYs{{X: float64(widthWidths[0]), Y: 0.95}, {X: float64(widthWidths[len(widthWidths)-1]), Y: 0.95}}); err != nil {
		return nil, err
	}
	cp.Y.Min, cp.Y.Max = 0, 1.05
	if err := addLines(tp, ts, nil); err != nil {
		return nil, err
	}
	out.Plots = append(out.Plots, cp, tp)
	out.Notes = append(out.Notes, fmt.Sprintf("linear setting, n %d, rho %.1f, %d repetitions per width; coverage of x1..x3 and seconds per feature by width %v:", widthN, timeErrorRho, x.reps, widthWidths))
	for i, e := range names {
		out.Notes = append(out.Notes, fmt.Sprintf("  - %s: coverage %s; seconds %s", e, fmtList(cover[i]), fmtList(secs[i])))
	}
	return out, nil
}
