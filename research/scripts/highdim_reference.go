//go:build ignore

// Retrain's own noise on vi bench highdim's setting: every feature of the
// high-dimensional setting (n 1000, p 100, mlp width 50, the bench's seed
// and split) with retrain, a second retrain from another model seed, lazy,
// lazy-es, dropout, cpi and permute, and each one's mean |VI - VI_retrain|
// and |VI - truth| (simulate.HighDimTruth) over the important features
// (x1..x5) and the others (x6..x100).
//
//	go run research/scripts/highdim_reference.go [SEED] [VALID]
//
// VALID, when given, is the mlp's valid option (0: no validation stopping,
// the training loss watched instead) for the full model and the retrains.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

type reseeded struct{}

func (reseeded) Name() string { return "retrain-2" }

func (reseeded) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	q := *p
	q.Spec.Seed += 1000
	return estimators.Retrain{}.Reduce(ctx, &q, f)
}

func main() {
	_ = lazyvi.DefaultBackend // registers the estimators
	seed := int64(1)
	if len(os.Args) > 1 {
		seed, _ = strconv.ParseInt(os.Args[1], 10, 64)
	}
	opts := map[string]string{"hidden": "50"}
	if len(os.Args) > 2 {
		opts["valid"] = os.Args[2]
	}
	ctx := context.Background()
	sim, err := simulate.HighDim(1000, seed)
	if err != nil {
		panic(err)
	}
	d := &dataio.Dataset{Source: "highdim", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Options: opts, Seed: seed})
	if err != nil {
		panic(err)
	}
	var ests []framework.Estimator
	for _, n := range []string{"retrain", "lazy", "lazy-es", "dropout", "cpi", "permute"} {
		e, err := framework.LookupEstimator(n)
		if err != nil {
			panic(err)
		}
		ests = append(ests, e)
	}
	ests = append(ests, reseeded{})
	feats, _ := dataio.ResolveFeatures(p.FeatureNames, "", nil, false)
	res, err := pipeline.Estimate(ctx, p, measures.MSE(), ests, feats, pipeline.EstimateOptions{Workers: 2, InferOptions: inference.InferOptions{Inference: inference.Plain}})
	if err != nil {
		panic(err)
	}
	ref := map[string]float64{}
	for _, r := range res {
		if r.Estimator == "retrain" {
			ref[r.Feature] = r.VI
		}
	}
	truth, err := simulate.HighDimTruth(ctx, 0.5)
	if err != nil {
		panic(err)
	}
	type acc struct{ imp, null, x1, impT, nullT float64 }
	by := map[string]*acc{}
	for _, r := range res {
		if by[r.Estimator] == nil {
			by[r.Estimator] = &acc{}
		}
		e := math.Abs(r.VI - ref[r.Feature])
		j, _ := strconv.Atoi(r.Feature[1:])
		et := math.Abs(r.VI - truth[j-1])
		if j <= 5 {
			by[r.Estimator].imp += e / 5
			by[r.Estimator].impT += et / 5
		} else {
			by[r.Estimator].null += e / 95
			by[r.Estimator].nullT += et / 95
		}
		if j == 1 {
			by[r.Estimator].x1 = (r.VI - ref[r.Feature]) / ref[r.Feature]
		}
	}
	fmt.Printf("seed %d, options %v, full model's eval mse %.4f\n", seed, opts, fullMSE(p))
	fmt.Println("mean |VI - VI_retrain| (all, x1..x5, x6..x100), x1's (VI - VI_retrain) / VI_retrain, then mean |VI - truth| (all, x1..x5, x6..x100)")
	fmt.Printf("%-10s %9s %9s %9s %9s | %9s %9s %9s\n", "estimator", "all", "x1..x5", "x6..x100", "x1 norm", "all", "x1..x5", "x6..x100")
	for _, e := range ests {
		a := by[e.Name()]
		fmt.Printf("%-10s %9.4f %9.4f %9.4f %9.4f | %9.4f %9.4f %9.4f\n", e.Name(), (5*a.imp+95*a.null)/100, a.imp, a.null, a.x1, (5*a.impT+95*a.nullT)/100, a.impT, a.nullT)
	}
}

func fullMSE(p *framework.Problem) float64 {
	s := 0.0
	for i, y := range p.YEval {
		d := y - p.FullEval.At(i, 0)
		s += d * d
	}
	return s / float64(len(p.YEval))
}
