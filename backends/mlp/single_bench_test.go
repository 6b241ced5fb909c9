package mlp

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkSingleProducts times the single-precision Phi v and Phi^T u of
// one vector on the lazy solve's shapes at scale: 6667 rows (vi bench
// highdim --n 10000's train rows), 100 inputs, hidden (200, 100) and the
// default run's 50 (the signals memoised, as in the solve's steps).
//
//	go test -run X -bench SingleProducts ./backends/mlp
func BenchmarkSingleProducts(b *testing.B) {
	for _, hidden := range []string{"200,100", "50"} {
		rng := rand.New(rand.NewPCG(1, 1))
		x, y := linearData(rng, 6667, 100, 0.5, 0.1)
		standardise(x)
		md := fitModel(b, framework.Regression, x, y, 1, map[string]string{"epochs": "1", "hidden": hidden})
		s := md.SinglePrecision()
		v := mat.NewDense(md.m, 1, nil)
		u := mat.NewDense(6667, 1, nil)
		for i := range md.m {
			v.Set(i, 0, rng.NormFloat64())
		}
		for i := range 6667 {
			u.Set(i, 0, rng.NormFloat64())
		}
		b.Run("JacobianMul_"+hidden, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.JacobianMul(ctx, x, v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("JacobianTMul_"+hidden, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.JacobianTMul(ctx, x, u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
