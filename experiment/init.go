package experiment

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/simulate"
)

func init() {
	register(&Experiment{
		Name:  "init",
		Short: "Fig. lazy_init: lazy from the full model's parameters against lazy from a random initialisation",
		Claim: "on the linear setting, LazyVI linearised around the full model's parameters is accurate for x1, x2 and x3, " +
			"while LazyVI linearised around a random initialisation is much less accurate and more variable (10 repetitions).",
		Reps: 10,
		run:  runInit,
	})
}

// randomInitLazy is lazy linearised around the network's initial
// parameters instead of the trained ones: the full model's architecture
// and seed, fitted for one epoch at a learning rate of 1e-12, which leaves
// the parameters at their initialisation and sets the response's scaling.
// Its baseline is the same linearisation with no feature removed.
type randomInitLazy struct{}

func (randomInitLazy) Name() string { return "lazy-random-init" }

func (r randomInitLazy) at(ctx context.Context, p *framework.Problem) (*framework.Problem, func(), error) {
	spec := p.Spec
	spec.Options = maps.Clone(spec.Options)
	if spec.Options == nil {
		spec.Options = map[string]string{}
	}
	spec.Options["epochs"], spec.Options["lr"] = "1", "1e-12"
	m, err := p.Backend.New(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	if err := m.Fit(ctx, p.XTrain, p.YTrain); err != nil {
		framework.Release(m)
		return nil, nil, fmt.Errorf("initialise: %w", err)
	}
	q := *p
	q.Full = m
	return &q, func() { framework.Release(m) }, nil
}

func (r randomInitLazy) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	q, done, err := r.at(ctx, p)
	if err != nil {
		return framework.Reduced{}, err
	}
	defer done()
	return lazy.Estimator{}.Reduce(ctx, q, f)
}

func (r randomInitLazy) Baseline(ctx context.Context, p *framework.Problem) (framework.Reduced, error) {
	q, done, err := r.at(ctx, p)
	if err != nil {
		return framework.Reduced{}, err
	}
	defer done()
	return lazy.Estimator{}.Baseline(ctx, q)
}

func runInit(x *env) (*Result, error) {
	ests, err := lookupAll("dropout", "lazy")
	if err != nil {
		return nil, err
	}
	ests = append(ests, randomInitLazy{})
	feats := []string{"x1", "x2", "x3"}
	out := &Result{Header: []string{"rep", "estimator", "feature", "vi", "truth", "truth_minus_vi"}}
	errs := map[string]map[string][]float64{}
	for _, e := range ests {
		errs[e.Name()] = map[string][]float64{}
	}
	for rep := 0; rep < x.reps; rep++ {
		seed := x.seed + int64(rep)
		x.status(fmt.Sprintf("init: repetition %d/%d", rep+1, x.reps))
		sim, err := simulate.Linear(timeErrorN, timeErrorRho, seed)
		if err != nil {
			return nil, err
		}
		res, err := x.estimate(expRun{sim: sim, model: expModel{mlp.Backend{}, "mlp", map[string]string{"hidden": "50"}}, ests: ests, features: feats, seed: seed, inference: inference.Plain})
		if err != nil {
			return nil, err
		}
		for _, e := range ests {
			for j, f := range feats {
				r := res.get(e.Name(), f)
				d := sim.Truth[j] - r.VI
				errs[e.Name()][f] = append(errs[e.Name()][f], d)
				out.Rows = append(out.Rows, []string{strconv.Itoa(rep), e.Name(), f, ftoa(r.VI), ftoa(sim.Truth[j]), ftoa(d)})
			}
		}
	}
	// One panel: each estimator's VI - estimate by feature, every
	// repetition a point, features side by side.
	p := newPanel("VI - estimate, by feature", "feature", "VI - estimate")
	var ss []series
	for i, e := range ests {
		s := series{label: e.Name()}
		for k, f := range feats {
			for _, d := range errs[e.Name()][f] {
				s.pts = append(s.pts, plotter.XY{X: float64(k) + 0.2*float64(i-1), Y: d})
			}
		}
		ss = append(ss, s)
	}
	if err := addScatter(p, ss); err != nil {
		return nil, err
	}
	p.NominalX(feats...)
	p.X.Min, p.X.Max = -0.5, float64(len(feats))-0.5
	out.Plots = append(out.Plots, p)
	out.Notes = append(out.Notes, fmt.Sprintf("linear setting, n %d, rho %.1f, mlp width 50, %d repetitions; VI - estimate, mean (sd) for x1, x2, x3:", timeErrorN, timeErrorRho, x.reps))
	for _, e := range ests {
		var parts []string
		for _, f := range feats {
			m, sd := meanSD(errs[e.Name()][f])
			parts = append(parts, fmt.Sprintf("%s %.3f (%.3f)", f, m, sd))
		}
		out.Notes = append(out.Notes, "  - "+e.Name()+": "+strings.Join(parts, "; "))
	}
	return out, nil
}
