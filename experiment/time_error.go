package experiment

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/simulate"
)

func init() {
	register(&Experiment{
		Name:  "time-error",
		Short: "Fig. time_error: the full linear experiment, time against error by group of variables",
		Claim: "on the linear setting, LazyVI and retrain are accurate for the important correlated variables {X1, X2}, " +
			"the important uncorrelated X3 and the null {X4, X5, X6}, LazyVI much faster; dropout is the fastest but far off for " +
			"{X1, X2}; LazyVI's and retrain's 95% intervals cover the important variables' VI (10 repetitions).",
		Reps: 10,
		run:  runTimeError,
	})
}

// The linear experiment's rows and correlation.
const (
	timeErrorN   = 2000
	timeErrorRho = 0.9
)

var linearGroups = []struct {
	name, short string
	feats       []string
}{
	{"important, correlated (x1, x2)", "x1,x2", []string{"x1", "x2"}},
	{"important, uncorrelated (x3)", "x3", []string{"x3"}},
	{"null (x4, x5, x6)", "x4..x6", []string{"x4", "x5", "x6"}},
}

func runTimeError(x *env) (*Result, error) {
	names := []string{"lazy", "dropout", "retrain", "cpi", "permute"}
	ests, err := lookupAll(names...)
	if err != nil {
		return nil, err
	}
	out := &Result{Header: []string{"rep", "estimator", "feature", "vi", "se", "ci_low", "ci_high", "seconds", "truth", "retrain_vi", "error_vs_retrain", "covers_truth"}}
	type key struct{ est, group string }
	pts := map[key]plotter.XYs{}
	cover := map[string][]float64{} // est -> 0/1 per important feature and rep
	for rep := 0; rep < x.reps; rep++ {
		seed := x.seed + int64(rep)
		x.status(fmt.Sprintf("time-error: repetition %d/%d", rep+1, x.reps))
		sim, err := simulate.Linear(timeErrorN, timeErrorRho, seed)
		if err != nil {
			return nil, err
		}
		res, err := x.estimate(expRun{sim: sim, model: expModel{mlp.Backend{}, "mlp", map[string]string{"hidden": "50"}}, ests: ests, seed: seed, inference: inference.Plain})
		if err != nil {
			return nil, err
		}
		for _, g := range linearGroups {
			for _, f := range g.feats {
				j, _ := strconv.Atoi(f[1:])
				truth := sim.Truth[j-1]
				ref := res.get("retrain", f).VI
				for _, e := range names {
					r := res.get(e, f)
					covers := r.CILow <= truth && truth <= r.CIHigh
					out.Rows = append(out.Rows, []string{strconv.Itoa(rep), e, f, ftoa(r.VI), ftoa(r.SE), ftoa(r.CILow), ftoa(r.CIHigh), ftoa(r.Seconds), ftoa(truth), ftoa(ref), ftoa(r.VI - ref), strconv.FormatBool(covers)})
					if e != "retrain" {
						pts[key{e, g.name}] = append(pts[key{e, g.name}], plotter.XY{X: math.Max(r.Seconds, 1e-4), Y: r.VI - ref})
					}
					if truth > 0 {
						cover[e] = append(cover[e], b2f(covers))
					}
				}
			}
		}
	}
	for _, g := range linearGroups {
		p := newPanel(g.name, "seconds per feature", "VI - VI_retrain")
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
		var ss []series
		for _, e := range names {
			if e != "retrain" {
				ss = append(ss, series{label: e, pts: pts[key{e, g.name}]})
			}
		}
		if err := addScatter(p, ss); err != nil {
			return nil, err
		}
		out.Plots = append(out.Plots, p)
	}
	out.Notes = append(out.Notes, fmt.Sprintf("n %d, rho %.1f, mlp width 50, %d repetitions; mean |VI - VI_retrain| by group, mean seconds per feature, and the 95%% intervals' coverage of the truth for x1, x2, x3:", timeErrorN, timeErrorRho, x.reps))
	for _, e := range names {
		var errs [][]float64
		var secs []float64
		for _, g := range linearGroups {
			var ys []float64
			for _, pt := range pts[key{e, g.name}] {
				ys, secs = append(ys, pt.Y), append(secs, pt.X)
			}
			errs = append(errs, ys)
		}
		out.Notes = append(out.Notes, timeErrorNote(e, errs, mean(secs), mean(cover[e])))
	}
	return out, nil
}

// timeErrorNote is an estimator's item of time-error's note: its mean
// |VI - VI_retrain| for each of linearGroups (errs, by group; none for
// retrain itself), its mean seconds per feature and its coverage.
func timeErrorNote(est string, errs [][]float64, seconds, coverage float64) string {
	var parts []string
	if est != "retrain" {
		groups := make([]string, len(linearGroups))
		for i, g := range linearGroups {
			groups[i] = fmt.Sprintf("%s %.3f", g.short, meanAbs(errs[i]))
		}
		parts = append(parts, "|VI - VI_retrain| "+strings.Join(groups, ", "), fmt.Sprintf("%.3f s per feature", seconds))
	}
	parts = append(parts, fmt.Sprintf("coverage %.2f", coverage))
	return fmt.Sprintf("  - %s: %s", est, strings.Join(parts, "; "))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
