package estimators

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkScaleBaselineReuse is the study behind the features' reuse of
// the baseline's solve at scale (vi bench highdim --n 10000 --width 200:100,
// the trained network): per feature x1..x8, the VI (squared error, against
// the full model) and the final solve's steps and seconds of each variant,
// and how far the VI moves from the feature's own search and cold solve
// (the behaviour before), in units of its standard error:
//
//   - own: the feature's own search on the subsample, cold start (before);
//   - warm: the same penalty, the solve started from the baseline's solution;
//   - reuse: the baseline's penalty, warm start (no search);
//   - near: the search started at the baseline's penalty (searchNear), warm.
func BenchmarkScaleBaselineReuse(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	for b.Loop() {
		base := framework.Feature{Name: "(baseline)"}
		xb, eb := c.residuals(b, base)
		start := time.Now()
		alphaB, err := (Lazy{}).subsampleAlpha(ctx, c.g, xb, c.t, eb, 1, c.seed, map[string]float64{}, 0)
		if err != nil {
			b.Fatal(err)
		}
		search := time.Since(start).Seconds()
		start = time.Now()
		wb := make([]float64, c.g.NumParams())
		steps := 0
		if !math.IsInf(alphaB, 1) {
			if wb, steps, _, err = matrixFreeSolve(ctx, c.g, xb, eb, alphaB, energyTol, DefaultMemory, nil); err != nil {
				b.Fatal(err)
			}
		}
		fmt.Printf("baseline: alpha %.4g, search %.2fs, solve %d steps %.2fs\n", alphaB, search, steps, time.Since(start).Seconds())
		for _, f := range c.p.Features()[:8] {
			x, e := c.residuals(b, f)
			var v0 float64
			for i, v := range []struct {
				name      string
				own, near bool
				warm      bool
			}{{"own", true, false, false}, {"warm", true, false, true}, {"reuse", false, false, true}, {"near", false, true, true}} {
				start := time.Now()
				alpha := alphaB
				if v.own || v.near {
					near := 0.0
					if v.near {
						near = alphaB
					}
					if alpha, err = (Lazy{}).subsampleAlpha(ctx, c.g, x, c.t, e, 1, c.seed, map[string]float64{}, near); err != nil {
						b.Fatal(err)
					}
				}
				search := time.Since(start).Seconds()
				start = time.Now()
				w := make([]float64, c.g.NumParams())
				steps := 0
				if !math.IsInf(alpha, 1) {
					var w0 []float64
					if v.warm {
						w0 = wb
					}
					if w, steps, _, err = matrixFreeSolve(ctx, c.g, x, e, alpha, energyTol, DefaultMemory, w0); err != nil {
						b.Fatal(err)
					}
				}
				secs := time.Since(start).Seconds()
				vi, se := evalVI(b, c.p, f, c.g, w)
				if i == 0 {
					v0 = vi
				}
				fmt.Printf("%s %-5s: alpha %.4g, search %.2fs, solve %d steps %.2fs, VI %.5g (SE %.3g), moved %.3g SE\n",
					f.Name, v.name, alpha, search, steps, secs, vi, se, math.Abs(vi-v0)/se)
			}
		}
	}
}
