package mlp

import (
	"math/rand/v2"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkSignals times the forward and backward passes that give a lazy
// reduction its residuals and its products' signals, in float64 and in
// float32 (pass32), on leanBlockRows rows of the large network's shape: 100
// inputs, hidden (512, 256).
//
//	go test -run X -bench Signals ./backends/mlp
func BenchmarkSignals(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := linearData(rng, leanBlockRows, 100, 0.5, 0.1)
	standardise(x)
	md := fitModel(b, framework.Regression, x, y, 1, map[string]string{"epochs": "1", "hidden": "512,256"})
	xg := x.RawMatrix()
	b.Run("signals", func(b *testing.B) {
		for b.Loop() {
			md.signals(xg)
		}
	})
	b.Run("single", func(b *testing.B) {
		for b.Loop() {
			md.pass32(xg, new(signals32))
		}
	})
}
