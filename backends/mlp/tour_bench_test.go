package mlp

import (
	"math/rand/v2"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkTourShapes times the dense dual path's calls at the README
// tour's size (n1 = 1333 train rows of p = 6, hidden 200,100: M = 21601):
// the kernel, Phi^T a on all the rows, and a prediction at shifted
// parameters on a held-out fold of 444 rows.
func BenchmarkTourShapes(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := linearData(rng, 1333, 6, 0.9, 0.1)
	standardise(x)
	md := fitModel(b, framework.Regression, x, y, 1, map[string]string{"epochs": "2", "hidden": "200,100"})
	dst := make([]float64, 1333*1333)
	b.Run("KernelInto", func(b *testing.B) {
		for b.Loop() {
			if _, err := md.KernelInto(ctx, x, nil, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("JacobianTVec", func(b *testing.B) {
		for b.Loop() {
			if _, err := md.JacobianTVec(ctx, x, y); err != nil {
				b.Fatal(err)
			}
		}
	})
	dtheta := make([]float64, md.NumParams())
	xh := x.Slice(0, 444, 0, 6)
	b.Run("PredictShifted", func(b *testing.B) {
		for b.Loop() {
			if _, err := md.PredictShifted(ctx, xh, dtheta); err != nil {
				b.Fatal(err)
			}
		}
	})
}
