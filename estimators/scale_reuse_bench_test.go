package estimators

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkScaleBaselineReuse is the study behind the features' use of the
// baseline's penalty at scale (vi bench highdim --n 10000 --width 200:100,
// the trained network): per feature x1..x8, the penalty, the search's and
// the final solve's seconds, and the VI (squared error, against the full
// model) of each variant, and how far the VI moves from the feature's own
// search (the behaviour before), in units of its standard error:
//
//   - own: the feature's own search on the subsample (searchLogAlpha);
//   - reuse: the baseline's penalty, no search;
//   - near: the search started at the baseline's penalty (searchNear,
//     what ReduceFrom does).
//
// A warm start of the final solve from the baseline's solution was
// measured too (at commit 5144c04) and not taken: see docs/performance.md.
func BenchmarkScaleBaselineReuse(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	for b.Loop() {
		xb, eb := c.residuals(b, framework.Feature{Name: "(baseline)"})
		start := time.Now()
		alphaB, err := (Lazy{}).subsampleAlpha(ctx, c.g, xb, c.t, eb, 1, c.seed, map[string]float64{}, 0)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("baseline: alpha %.4g, search %.2fs\n", alphaB, time.Since(start).Seconds())
		for _, f := range c.p.Features()[:8] {
			x, e := c.residuals(b, f)
			var v0 float64
			for i, v := range []string{"own", "reuse", "near"} {
				start := time.Now()
				alpha := alphaB
				if v != "reuse" {
					near := 0.0
					if v == "near" {
						near = alphaB
					}
					if alpha, err = (Lazy{}).subsampleAlpha(ctx, c.g, x, c.t, e, 1, c.seed, map[string]float64{}, near); err != nil {
						b.Fatal(err)
					}
				}
				search := time.Since(start).Seconds()
				start = time.Now()
				w := make([]float64, c.g.NumParams()) // no update: the full model
				steps := 0
				if !math.IsInf(alpha, 1) {
					if w, steps, _, err = matrixFreeSolve(ctx, c.g, x, e, alpha, energyTol, DefaultMemory); err != nil {
						b.Fatal(err)
					}
				}
				secs := time.Since(start).Seconds()
				vi, se := evalVI(b, c.p, f, c.g, w)
				if i == 0 {
					v0 = vi
				}
				fmt.Printf("%s %-5s: alpha %.4g, search %.2fs, solve %d steps %.2fs, VI %.5g (SE %.3g), moved %.3g SE\n",
					f.Name, v, alpha, search, steps, secs, vi, se, math.Abs(vi-v0)/se)
			}
		}
	}
}
