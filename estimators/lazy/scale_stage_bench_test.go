//go:build unix

package lazy

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// BenchmarkScaleStages is vi bench highdim --n 10000 --width 200:100
// --features 4 --estimators lazy in process (no plugin transport): the
// baseline and x1..x4 as pipeline.Reduce schedules them, at 1 and 2
// workers, on a fresh copy of the model each time: the wall time, the
// process's CPU seconds and minor page faults (the first round's, in a
// process whose heap has not grown yet, show what touching fresh memory
// costs), each step's seconds (summed over the workers) and counted
// GFLOP/s, and each reduction's seconds and stats. Its numbers less vi
// bench's are the transport's cost.
//
//	go test -run X -bench ScaleStages -benchtime 3x ./estimators/lazy
func BenchmarkScaleStages(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	state, err := c.p.Full.(framework.Persister).SaveState(ctx)
	if err != nil {
		b.Fatal(err)
	}
	feats := c.p.Features()[:4]
	for b.Loop() {
		for _, workers := range []int{1, 2} {
			m, err := c.p.Backend.New(ctx, c.p.Spec)
			if err == nil {
				err = m.(framework.Persister).LoadState(ctx, state)
			}
			if err != nil {
				b.Fatal(err)
			}
			q := *c.p
			q.Full = m
			var stages framework.Stages
			var ru0, ru1 syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru0); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			r, err := pipeline.Reduce(framework.WithStages(ctx, &stages), []*framework.Problem{&q}, []framework.Estimator{Estimator{}}, feats, pipeline.ReduceOptions{Workers: workers, EstimatorBaselines: true})
			if err != nil {
				b.Fatal(err)
			}
			wall := time.Since(start).Seconds()
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru1); err != nil {
				b.Fatal(err)
			}
			cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()).Seconds()
			line := fmt.Sprintf("workers %d: %.3f s (%.3f s a feature), %.2f CPU s, %d minor faults;", workers, wall, wall/float64(len(feats)), cpu, ru1.Minflt-ru0.Minflt)
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
