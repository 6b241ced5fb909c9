//go:build unix

package lazy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/internal/timing"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// BenchmarkScaleVIs is lazy as vi bench runs it (pipeline.Estimate, plain
// inference, the baseline with the features, one worker, a fresh copy of
// the model) on highdim n 10000 (x1..x16) and linear n 20000 (x1..x6),
// (200, 100), and on highdim n 10000 at width 50 (x1..x16; the width the
// default run's model choice picks there): the wall and CPU seconds, each
// step's seconds and counted GFLOP (deterministic, so that builds compare
// whatever else the machine runs), and per feature the VI, its SE, the
// final solve's Krylov steps and flops and the penalty, so that two
// builds' VIs can be compared in SEs.
//
//	go test -run X -bench ScaleVIs -benchtime 1x ./estimators/lazy
func BenchmarkScaleVIs(b *testing.B) {
	ctx := context.Background()
	for _, c := range []*scaleProblem{&scaleTrained, &scaleLinearBench, &scaleWidth50} {
		b.Run(fmt.Sprintf("%s-%d-%s", c.setting, c.n, c.widths()), func(b *testing.B) {
			c.get(b)
			fresh := c.freshCopies(ctx, b)
			feats := c.p.Features()
			feats = feats[:min(16, len(feats))]
			for b.Loop() {
				var stages timing.Stages
				cpu0, _ := processCPU(b)
				start := time.Now()
				res, err := pipeline.Estimate(timing.With(ctx, &stages), fresh(), measures.MSE(), []framework.Estimator{Estimator{}}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 1})
				if err != nil {
					b.Fatal(err)
				}
				cpu1, _ := processCPU(b)
				fmt.Printf("%s n %d (%s): %.2f s, %.2f CPU s\n", c.setting, c.n, c.widths(), time.Since(start).Seconds(), cpu1-cpu0)
				for _, t := range stages.Totals() {
					fmt.Printf("  %s %.3f s, %.3f GFLOP\n", t.Name, t.Seconds, t.Flops/1e9)
				}
				for _, r := range res {
					steps, _ := r.Get(statSteps)
					flops, _ := r.Get(statFlops)
					lambda, _ := r.Get(statLambda)
					fmt.Printf("  %s: VI %.6f (SE %.6f), steps %v, flops %v, lambda %v\n", r.Feature, r.VI, r.SE, steps, flops, lambda)
				}
			}
		})
	}
}

// scaleWidth50 is highdim n 10000 with one hidden layer of 50, the
// network the default run's model choice picks for that file.
var scaleWidth50 = scaleProblem{setting: "highdim", n: 10000, rho: 0.5, trained: true, hidden: "50"}

// widths names c's hidden layers.
func (c *scaleProblem) widths() string {
	if c.hidden == "" {
		return "200,100"
	}
	return c.hidden
}
