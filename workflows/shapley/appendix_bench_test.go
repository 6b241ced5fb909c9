package shapley_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// BenchmarkAppendix is the LazyVI paper's appendix experiment on Shapley
// values: p = 100 features, Corr(x1, x2) = 0.75, a logistic response with
// beta = (5, 4, 3, 2, 1, 0, ...), n = 750 split 500/250, a one-hidden-layer
// MLP of width 128, lazy's penalty fixed at 50. One iteration estimates the
// Shapley values with lazy and with retrain reduced models on the same
// subsets, in the same process, reports both wall times and their ratio
// (the paper: 50 s against 273 s, 5.4x) and logs a table; run it with
//
//	go test ./workflows/shapley -run '^$' -bench Appendix -benchtime 1x -v
//
// Environment: LAZYVI_SHAPLEY_SUBSETS (a fixed number of subsets; default
// 0, sampling until the stopping rule holds), LAZYVI_SHAPLEY_MEASURE (default logloss),
// LAZYVI_SHAPLEY_SEED (default 1), LAZYVI_SHAPLEY_WORKERS (default 2).
func BenchmarkAppendix(b *testing.B) {
	draws := envInt(b, "LAZYVI_SHAPLEY_SUBSETS", 0)
	seed := envInt(b, "LAZYVI_SHAPLEY_SEED", 1)
	workers := envInt(b, "LAZYVI_SHAPLEY_WORKERS", 2)
	mname := os.Getenv("LAZYVI_SHAPLEY_MEASURE")
	if mname == "" {
		mname = "logloss"
	}
	m, err := framework.LookupMeasure(mname)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		sim, err := simulate.Logistic(750, simulate.LogisticRho, int64(seed))
		if err != nil {
			b.Fatal(err)
		}
		d := &dataio.Dataset{Source: "logistic", Names: sim.Names, X: sim.X}
		cfg := pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: int64(seed),
			TrainFrac: 500.0 / 750, Options: map[string]string{"hidden": "128"}}
		rep, err := shapley.Run(context.Background(), d, cfg, m,
			[]framework.Estimator{lazy.Estimator{Lambda: 50}, estimators.Retrain{}},
			shapley.RunOptions{Stop: shapley.Stop{Subsets: draws}, Options: shapley.Options{Workers: workers}})
		if err != nil {
			b.Fatal(err)
		}
		const p = simulate.LogisticP
		lazy, retrain := rep.Results[:p], rep.Results[p:]
		tl, tr := rep.Estimators[0].Seconds, rep.Estimators[1].Seconds
		var sb strings.Builder
		fmt.Fprintf(&sb, "measure %s, n %d (%d/%d), enumerated sizes %v (%d subsets), workers %d\n",
			rep.Measure, rep.N, rep.NTrain, rep.NEval, rep.Subsets.Sizes, rep.Subsets.Enumerated, workers)
		for _, s := range rep.Estimators {
			fig := math.NaN()
			if s.Figure != nil {
				fig = *s.Figure
			}
			fmt.Fprintf(&sb, "%s: %d subsets (%d pairs), converged %v, %s %.3f (threshold %g)\n",
				s.Estimator, s.Subsets, s.Pairs, s.Converged, rep.Subsets.Rule, fig, rep.Subsets.Threshold)
		}
		fmt.Fprintf(&sb, "full %.4f, empty %.4f; sums: lazy %.4f, retrain %.4f\n",
			rep.Full.Score, rep.Empty.Score, rep.Estimators[0].Sum, rep.Estimators[1].Sum)
		fmt.Fprintf(&sb, "seconds: full model %.1f, shapley-lazy %.1f, shapley-retrain %.1f, ratio %.1fx\n",
			rep.Full.Seconds, tl, tr, tr/tl)
		fmt.Fprintf(&sb, "%-5s %9s %8s %9s %8s %7s\n", "feat", "lazy", "se", "retrain", "se", "z(l-r)")
		nullOut, nullOutR, outside := 0, 0, 0
		for j := range p {
			l, r := lazy[j], retrain[j]
			zd := (l.VI - r.VI) / math.Hypot(l.SE, r.SE)
			if j < 8 {
				fmt.Fprintf(&sb, "%-5s %9.4f %8.4f %9.4f %8.4f %7.2f\n", l.Feature, l.VI, l.SE, r.VI, r.SE, zd)
			}
			if j < 5 && math.Abs(l.VI-r.VI) > 2*r.SE {
				outside++
			}
			if j >= 5 && math.Abs(l.VI) > 2*l.SE {
				nullOut++
			}
			if j >= 5 && math.Abs(r.VI) > 2*r.SE {
				nullOutR++
			}
		}
		ordered := true
		for j := 1; j < 5; j++ {
			if lazy[j].VI >= lazy[j-1].VI {
				ordered = false
			}
		}
		var nl, nr float64
		for j := 5; j < p; j++ {
			nl += lazy[j].VI * lazy[j].VI
			nr += retrain[j].VI * retrain[j].VI
		}
		fmt.Fprintf(&sb, "x1..x5 lazy ordered as beta: %v; lazy outside 2 retrain-SE of retrain: %d of 5\n", ordered, outside)
		fmt.Fprintf(&sb, "null features outside 2 SE of 0: lazy %d of 95, retrain %d of 95; RMS of null values: lazy %.4f, retrain %.4f\n",
			nullOut, nullOutR, math.Sqrt(nl/95), math.Sqrt(nr/95))
		b.Log("\n" + sb.String())
		b.ReportMetric(tl, "lazy-s")
		b.ReportMetric(tr, "retrain-s")
		b.ReportMetric(tr/tl, "speedup")
	}
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return v
}

var _ = measures.R2 // the measures register themselves

// BenchmarkAppendixPerSubset times one reduced model of the appendix
// setting (one goroutine) for each way of fitting it, on subsets drawn from
// the Shapley kernel: lazy with the appendix's fixed penalty, and retrain.
//
//	go test ./workflows/shapley -run '^$' -bench AppendixPerSubset -benchtime 10x
func BenchmarkAppendixPerSubset(b *testing.B) {
	sim, err := simulate.Logistic(750, simulate.LogisticRho, 1)
	if err != nil {
		b.Fatal(err)
	}
	d := &dataio.Dataset{Source: "logistic", Names: sim.Names, X: sim.X}
	prob, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp",
		Seed: 1, TrainFrac: 500.0 / 750, Options: map[string]string{"hidden": "128"}})
	if err != nil {
		b.Fatal(err)
	}
	defer prob.Close()
	design, err := shapley.NewDesign(simulate.LogisticP, shapley.Stop{}, false, 1)
	if err != nil {
		b.Fatal(err)
	}
	plan := shapley.NewPlan(design)
	for plan.Draw(shapley.DefaultMaxSubsets) > 0 && len(plan.Subsets) < 1000 {
	}
	for _, e := range []framework.Estimator{lazy.Estimator{Lambda: 50}, estimators.Retrain{}} {
		b.Run(e.Name(), func(b *testing.B) {
			for i := range b.N {
				s := plan.Subsets[i%len(plan.Subsets)]
				f := framework.Feature{Name: s.String(), Columns: s.Complement(simulate.LogisticP)}
				if _, err := e.Reduce(context.Background(), prob, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
