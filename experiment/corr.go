package experiment

import (
	"fmt"
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
		Name:  "corr",
		Short: "Fig. corr: dropout minus lazy against rho, with Prop. 3.1's line",
		Claim: "on the linear setting (y = 1.5 x1 + 1.2 x2 + x3 + noise, Corr(x1, x2) = rho), the gap between dropout's and LazyVI's " +
			"estimates for X1 and X2 follows the analytic gap beta_j^2 rho^2 of Proposition 3.1 as rho grows (10 repetitions).",
		Reps: 10,
		run:  runCorr,
	})
}

// corrRhos are the correlations corr sweeps; corrN its rows.
var corrRhos = []float64{0, 0.2, 0.4, 0.6, 0.8, 0.9}

const corrN = 2000

func runCorr(x *env) (*Result, error) {
	ests, err := lookupAll("dropout", "lazy", "cpi")
	if err != nil {
		return nil, err
	}
	feats := []string{"x1", "x2"}
	beta := map[string]float64{"x1": 1.5, "x2": 1.2}
	out := &Result{Header: []string{"rep", "rho", "feature", "dropout", "lazy", "cpi", "truth", "dropout_minus_lazy", "dropout_minus_cpi", "theory_gap"}}
	// gaps[est][feature][k]: dropout minus est at corrRhos[k], over the reps.
	gaps := map[string]map[string][][]float64{}
	for _, e := range []string{"lazy", "cpi"} {
		gaps[e] = map[string][][]float64{}
		for _, f := range feats {
			gaps[e][f] = make([][]float64, len(corrRhos))
		}
	}
	for k, rho := range corrRhos {
		for rep := 0; rep < x.reps; rep++ {
			seed := x.seed + int64(rep)
			x.status(fmt.Sprintf("corr: rho %.1f, repetition %d/%d", rho, rep+1, x.reps))
			sim, err := simulate.Linear(corrN, rho, seed)
			if err != nil {
				return nil, err
			}
			res, err := x.estimate(expRun{sim: sim, model: expModel{mlp.Backend{}, "mlp", map[string]string{"hidden": "50"}}, ests: ests, features: feats, seed: seed, inference: inference.Plain})
			if err != nil {
				return nil, err
			}
			for j, f := range feats {
				dr, lz, cp := res.get("dropout", f).VI, res.get("lazy", f).VI, res.get("cpi", f).VI
				theory := beta[f] * beta[f] * rho * rho
				gaps["lazy"][f][k] = append(gaps["lazy"][f][k], dr-lz)
				gaps["cpi"][f][k] = append(gaps["cpi"][f][k], dr-cp)
				out.Rows = append(out.Rows, []string{strconv.Itoa(rep), ftoa(rho), f, ftoa(dr), ftoa(lz), ftoa(cp), ftoa(sim.Truth[j]), ftoa(dr - lz), ftoa(dr - cp), ftoa(theory)})
			}
		}
	}
	for _, f := range feats {
		p := newPanel(fmt.Sprintf("%s: dropout minus estimate", f), "rho", "VI_dropout - VI")
		var ss []series
		var sds [][]float64
		for _, e := range []string{"lazy", "cpi"} {
			s := series{label: "dropout - " + e}
			var sd []float64
			for k, rho := range corrRhos {
				m, d := meanSD(gaps[e][f][k])
				s.pts = append(s.pts, plotter.XY{X: rho, Y: m})
				sd = append(sd, d)
			}
			ss, sds = append(ss, s), append(sds, sd)
		}
		if err := addLines(p, ss, sds); err != nil {
			return nil, err
		}
		var theory plotter.XYs
		for r := 0.0; r <= 0.9001; r += 0.05 {
			theory = append(theory, plotter.XY{X: r, Y: beta[f] * beta[f] * r * r})
		}
		if err := addReference(p, "beta^2 rho^2 (Prop. 3.1)", theory); err != nil {
			return nil, err
		}
		out.Plots = append(out.Plots, p)
	}
	out.Plots = []*plot.Plot{out.Plots[0], out.Plots[1]}
	out.Notes = append(out.Notes, fmt.Sprintf("n %d, mlp width 50, %d repetitions per rho; by feature, the mean gaps dropout - lazy (with its sd) and dropout - cpi, and Prop. 3.1's beta^2 rho^2:", corrN, x.reps))
	for k, rho := range corrRhos {
		var parts []string
		for _, f := range feats {
			m, d := meanSD(gaps["lazy"][f][k])
			mc, _ := meanSD(gaps["cpi"][f][k])
			parts = append(parts, fmt.Sprintf("%s: dropout - lazy %.3f (sd %.3f), dropout - cpi %.3f, beta^2 rho^2 %.3f", f, m, d, mc, beta[f]*beta[f]*rho*rho))
		}
		out.Notes = append(out.Notes, fmt.Sprintf("  - rho %.1f: %s", rho, strings.Join(parts, "; ")))
	}
	return out, nil
}
