//go:build unix

package lazy

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/timing"
	"github.com/lazyvi/lazyvi/pipeline"
)

// BenchmarkScaleStages is vi bench highdim --n 10000 --width 200:100
// --features 4 --estimators lazy in process, as vi runs it: the
// baseline and x1..x4 as pipeline.Reduce schedules them, at 1 and 2
// workers, on a fresh copy of the model each time: the wall time, the
// process's CPU seconds and minor page faults (the first round's, in a
// process whose heap has not grown yet, show what touching fresh memory
// costs), each step's seconds (summed over the workers) and counted
// GFLOP/s, and each reduction's seconds and stats. vi bench
// --backend-process's numbers less these are the plugin transport's cost.
//
//	go test -run X -bench ScaleStages -benchtime 3x ./estimators/lazy
func BenchmarkScaleStages(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	fresh := c.freshCopies(ctx, b)
	feats := c.p.Features()[:4]
	for b.Loop() {
		for _, workers := range []int{1, 2} {
			q := fresh()
			var stages timing.Stages
			cpu0, faults0 := processCPU(b)
			start := time.Now()
			r, err := pipeline.Reduce(timing.With(ctx, &stages), []*framework.Problem{q}, []framework.Estimator{Estimator{}}, feats, pipeline.ReduceOptions{Workers: workers, EstimatorBaselines: true})
			if err != nil {
				b.Fatal(err)
			}
			wall := time.Since(start).Seconds()
			cpu1, faults1 := processCPU(b)
			line := fmt.Sprintf("workers %d: %.3f s (%.3f s a feature), %.2f CPU s, %d minor faults;", workers, wall, wall/float64(len(feats)), cpu1-cpu0, faults1-faults0)
			for _, t := range stages.Totals() {
				line += fmt.Sprintf(" %s %.3f s", t.Name, t.Seconds)
				if t.Flops > 0 {
					line += fmt.Sprintf(" (%.1f GFLOP/s)", t.Flops/t.Seconds/1e9)
				}
			}
			fmt.Println(line)
			fmt.Printf("  baseline: %.3f s %v\n", r.BaseSeconds[0][0], r.Base[0][0].Stats)
			for i, red := range r.Reduced[0][0] {
				fmt.Printf("  %s: %.3f s %v\n", feats[i].Name, r.Seconds[0][0][i], red.Stats)
			}
		}
	}
}
