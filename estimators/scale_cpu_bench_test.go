//go:build unix

package estimators

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// scaleTrained is vi bench highdim --n 10000 --width 200:100: the MLP's
// default training (validation stopping), as retrain uses it.
var scaleTrained = scaleProblem{setting: "highdim", n: 10000, rho: 0.5, trained: true}

// BenchmarkScaleVsRetrain is vi bench highdim --n 10000 --width 200:100
// --features 4 in CPU seconds (user + system of this process, every
// thread), which a loaded machine disturbs far less than wall time: lazy
// and retrain per feature, one feature at a time.
func BenchmarkScaleVsRetrain(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	cpu := func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	for b.Loop() {
		var sumL, sumR float64
		for _, f := range c.p.Features()[:4] {
			var secs [2]float64
			var wall [2]float64
			for i, est := range []framework.Estimator{Lazy{}, Retrain{}} {
				c0, w0 := cpu(), time.Now()
				if _, err := est.Reduce(ctx, c.p, f); err != nil {
					b.Fatal(err)
				}
				secs[i], wall[i] = cpu()-c0, time.Since(w0).Seconds()
			}
			sumL, sumR = sumL+secs[0], sumR+secs[1]
			fmt.Printf("%s: lazy %.2f CPU s (%.2f wall), retrain %.2f CPU s (%.2f wall)\n", f.Name, secs[0], wall[0], secs[1], wall[1])
		}
		fmt.Printf("x1..x4: lazy %.2f CPU s, retrain %.2f CPU s: retrain / lazy %.2f\n", sumL, sumR, sumR/sumL)
	}
}
