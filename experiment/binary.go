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
		Name:  "binary",
		Short: "Fig. williamson: coverage and bias of lazy and retrain, probit setting, accuracy",
		Claim: "on Williamson et al.'s probit setting (x ~ N(0, I_4), beta = (2.5, 3.5, 0, 0), accuracy; true VI (0.136, 0.236, 0, 0)), " +
			"over 100 data sets of n = 1000, LazyVI's and retrain's 95% intervals reach the nominal coverage with low bias; " +
			"LazyVI took 0.6 s on average, retrain 7.5 s.",
		Reps: 100,
		run:  runBinary,
	})
}

func runBinary(x *env) (*Result, error) {
	names := []string{"lazy", "retrain", "cpi"}
	ests, err := lookupAll(names...)
	if err != nil {
		return nil, err
	}
	feats := []string{"x1", "x2", "x3", "x4"}
	out := &Result{Header: []string{"rep", "estimator", "feature", "vi", "se", "ci_low", "ci_high", "seconds", "truth", "covers"}}
	cover := make([][]float64, len(names))
	bias := make([][]float64, len(names))
	secs := make([][]float64, len(names))
	for i := range names {
		cover[i], bias[i] = make([]float64, len(feats)), make([]float64, len(feats))
	}
	truth := simulate.BinaryTruth()
	for rep := 0; rep < x.reps; rep++ {
		seed := x.seed + int64(rep)
		x.status(fmt.Sprintf("binary: repetition %d/%d", rep+1, x.reps))
		sim, err := simulate.Binary(1000, seed)
		if err != nil {
			return nil, err
		}
		res, err := x.estimate(expRun{sim: sim, model: expModel{mlp.Backend{}, "mlp", map[string]string{"hidden": "50"}}, ests: ests, seed: seed, inference: inference.Plain})
		if err != nil {
			return nil, err
		}
		for i, e := range names {
			for k, f := range feats {
				r := res.get(e, f)
				c := r.CILow <= truth[k] && truth[k] <= r.CIHigh
				cover[i][k] += b2f(c) / float64(x.reps)
				bias[i][k] += (truth[k] - r.VI) / float64(x.reps)
				secs[i] = append(secs[i], r.Seconds)
				out.Rows = append(out.Rows, []string{strconv.Itoa(rep), e, f, ftoa(r.VI), ftoa(r.SE), ftoa(r.CILow), ftoa(r.CIHigh), ftoa(r.Seconds), ftoa(truth[k]), strconv.FormatBool(c)})
			}
		}
	}
	cp, err := barPanel("coverage of the 95% intervals", "coverage", feats, names, cover)
	if err != nil {
		return nil, err
	}
	if err := addReference(cp, "0.95", plotter.XYs{{X: -0.5, Y: 0.95}, {X: 3.5, Y: 0.95}}); err != nil {
		return nil, err
	}
	bp, err := barPanel("bias (VI - estimate)", "mean VI - estimate", feats, names, bias)
	if err != nil {
		return nil, err
	}
	out.Plots = append(out.Plots, cp, bp)
	out.Notes = append(out.Notes, fmt.Sprintf("n 1000, mlp width 50, plain (Wald) intervals, %d repetitions; coverage and mean bias for x1..x4, mean seconds per feature:", x.reps))
	for i, e := range names {
		out.Notes = append(out.Notes, fmt.Sprintf("  - %s: coverage %s, bias %s, %.2f s", e, fmtList(cover[i]), fmtList(bias[i]), mean(secs[i])))
	}
	return out, nil
}

func fmtList(v []float64) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += strconv.FormatFloat(x, 'f', 3, 64)
	}
	return s
}
