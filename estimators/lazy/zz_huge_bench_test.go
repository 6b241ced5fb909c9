//go:build unix

package lazy

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/timing"
	"github.com/lazyvi/lazyvi/pipeline"
)

var hugeTrained = scaleProblem{setting: "highdim", n: 100000, rho: 0.5, trained: true, hidden: "512,256"}

func BenchmarkZZHuge(b *testing.B) {
	c := &hugeTrained
	c.get(b)
	ctx := context.Background()
	fresh := c.freshCopies(ctx, b)
	feats := c.p.Features()[:4]
	variants := map[string]Estimator{"default": {}}
	if os.Getenv("ZZ_ROWS") != "" {
		var r int
		fmt.Sscan(os.Getenv("ZZ_ROWS"), &r)
		variants["rows"] = Estimator{cfg: config{subsampleRows: r}}
	}
	for b.Loop() {
		for _, name := range []string{"default", "default", "default"} {
			est, ok := variants[name]
			if !ok {
				continue
			}
			q := fresh()
			var stages timing.Stages
			cpu0, f0 := processCPU(b)
			start := time.Now()
			r, err := pipeline.Reduce(timing.With(ctx, &stages), []*framework.Problem{q}, []framework.Estimator{est}, feats, pipeline.ReduceOptions{Workers: 2, EstimatorBaselines: true})
			if err != nil {
				b.Fatal(err)
			}
			wall := time.Since(start).Seconds()
			cpu1, f1 := processCPU(b)
			line := fmt.Sprintf("%s: %.3f s (%.3f s a feature), cpu %.2f s, %d minor faults;", name, wall, wall/float64(len(feats)), cpu1-cpu0, f1-f0)
			for _, t := range stages.Totals() {
				line += fmt.Sprintf(" %s %.3f s", t.Name, t.Seconds)
			}
			fmt.Println(line)
			fmt.Printf("  baseline: %.3f s %v\n", r.BaseSeconds[0][0], r.Base[0][0].Stats)
			for i, red := range r.Reduced[0][0] {
				fmt.Printf("  %s: %.3f s %v\n", feats[i].Name, r.Seconds[0][0][i], red.Stats)
			}
		}
	}
}
