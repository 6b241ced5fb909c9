package experiment

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

func init() {
	register(&Experiment{
		Name:  "shapley",
		Short: "Appendix table and figure: Shapley values by lazy and by retrain, and their time",
		Claim: "on the logistic setting (p = 100, beta = (5, 4, 3, 2, 1, 0, ...), Corr(X1, X2) = 0.75, n 750: 500 train, 250 test; " +
			"a width-128 network; 20 data sets), lazy's Shapley values are close to retrain's for the important features and vary less " +
			"for the null ones; one data set took retrain 272.75 s (sd 10.8) and lazy 50.27 s (sd 1.6), over 5 times faster.",
		Reps: 20,
		run:  runShapley,
	})
}

// shapleyPlayers are the experiment's players: x1..x5 alone and the 95
// null features as one group, so that every subset of the six is fitted
// (62 reduced models per estimator) instead of a sample of subsets of 100.
func shapleyPlayers() []dataio.Group {
	g := dataio.Group{Name: "x6-x100"}
	for j := 6; j <= simulate.LogisticP; j++ {
		g.Columns = append(g.Columns, "x"+strconv.Itoa(j))
	}
	return []dataio.Group{g}
}

func runShapley(x *env) (*Result, error) {
	names := []string{"retrain", "lazy"}
	reds, err := lookupAll(names...)
	if err != nil {
		return nil, err
	}
	players := []string{"x1", "x2", "x3", "x4", "x5", "x6-x100"}
	out := &Result{Header: []string{"rep", "estimator", "player", "shapley", "se", "seconds_total"}}
	vals := make([][][]float64, len(names)) // [estimator][player][rep]
	secs := make([][]float64, len(names))
	for i := range names {
		vals[i] = make([][]float64, len(players))
	}
	for rep := 0; rep < x.reps; rep++ {
		seed := x.seed + int64(rep)
		x.status(fmt.Sprintf("shapley: repetition %d/%d", rep+1, x.reps))
		sim, err := simulate.Logistic(750, simulate.LogisticRho, seed)
		if err != nil {
			return nil, err
		}
		d := &dataio.Dataset{Source: sim.Setting, Names: sim.Names, X: sim.X}
		m, err := framework.LookupMeasure(sim.Measure)
		if err != nil {
			return nil, err
		}
		cfg := pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Options: map[string]string{"hidden": "128"}, Seed: seed, TrainFrac: 500.0 / 750, Groups: shapleyPlayers()}
		rep2, err := shapley.Run(x.ctx, d, cfg, m, reds, shapley.RunOptions{Options: shapley.Options{Workers: x.workers}, Exact: true})
		if err != nil {
			return nil, err
		}
		for i, e := range names {
			for _, s := range rep2.Estimators {
				if shapleyNamed(s.Estimator, e) {
					secs[i] = append(secs[i], s.Seconds)
				}
			}
			for k, pl := range players {
				for _, r := range rep2.Results {
					if shapleyNamed(r.Estimator, e) && r.Feature == pl {
						vals[i][k] = append(vals[i][k], r.VI)
						out.Rows = append(out.Rows, []string{strconv.Itoa(rep), e, pl, ftoa(r.VI), ftoa(r.SE), ftoa(secs[i][len(secs[i])-1])})
					}
				}
			}
		}
	}
	means := make([][]float64, len(names))
	sds := make([][]float64, len(names))
	for i := range names {
		for k := range players {
			m, sd := meanSD(vals[i][k])
			means[i], sds[i] = append(means[i], m), append(sds[i], sd)
		}
	}
	vp, err := barPanel("Shapley values (accuracy), mean over repetitions", "Shapley value", players, names, means)
	if err != nil {
		return nil, err
	}
	sp, err := barPanel("their sd over repetitions", "sd", players, names, sds)
	if err != nil {
		return nil, err
	}
	out.Plots = append(out.Plots, vp, sp)
	out.Notes = append(out.Notes, fmt.Sprintf("logistic setting, n 750 (500 train), mlp width 128, players x1..x5 and x6-x100 (every subset: 62 reduced models), %d repetitions; mean (sd) by player, and seconds per data set:", x.reps))
	for i, e := range names {
		var parts []string
		for k, pl := range players {
			parts = append(parts, fmt.Sprintf("%s %.3f (%.3f)", pl, means[i][k], sds[i][k]))
		}
		m, sd := meanSD(secs[i])
		parts = append(parts, fmt.Sprintf("%.1f s (sd %.1f) per data set", m, sd))
		out.Notes = append(out.Notes, "  - "+e+": "+strings.Join(parts, "; "))
	}
	return out, nil
}

// shapleyNamed reports whether a Shapley report's estimator name (the
// reduced-model estimator's, prefixed "shapley-") is that of e.
func shapleyNamed(name, e string) bool { return name == e || name == "shapley-"+e }
