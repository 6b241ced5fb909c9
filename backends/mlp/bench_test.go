package mlp

import (
	"math/rand/v2"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkFit times training with the default options on the paper's
// shapes: the linear setting (n = 3333, p = 6), the high-dimensional one
// (n = 667, p = 100) and the binary one (n = 667, p = 4), width 50. The
// fixed-epoch cases measure the time per epoch independently of the
// stopping rule.
func BenchmarkFit(b *testing.B) {
	fixed := map[string]string{"epochs": "100", "patience": "1000"}
	for _, bc := range []struct {
		name string
		task framework.Task
		n, p int
		opts map[string]string
	}{
		{"linear_n3333_p6", framework.Regression, 3333, 6, nil},
		{"highdim_n667_p100", framework.Regression, 667, 100, nil},
		{"probit_n667_p4", framework.Binary, 667, 4, nil},
		{"linear_n3333_p6_100epochs", framework.Regression, 3333, 6, fixed},
		{"highdim_n667_p100_100epochs", framework.Regression, 667, 100, fixed},
	} {
		rng := rand.New(rand.NewPCG(1, 1))
		xd, y := linearData(rng, bc.n, bc.p, 0.9, 0.1)
		if bc.task == framework.Binary {
			xd, y, _ = probitData(rng, bc.n, bc.p, []float64{2.5, 3.5})
		}
		standardise(xd)
		b.Run(bc.name, func(b *testing.B) {
			var epochs int
			for i := 0; i < b.N; i++ {
				md := fitModel(b, bc.task, xd, y, int64(i), bc.opts)
				epochs += md.Epochs()
			}
			b.ReportMetric(float64(epochs)/float64(b.N), "epochs/op")
		})
	}
}

// BenchmarkKernel times the symmetric NTK Gram and the transposed Jacobian
// product on the linear setting's train split, in double and in single
// precision (SingleKernel; the signals memoised, as in lazy's search).
func BenchmarkKernel(b *testing.B) {
	for _, bc := range []struct {
		name string
		n, p int
	}{
		{"n3333_p6", 3333, 6},
		{"n667_p100", 667, 100},
	} {
		rng := rand.New(rand.NewPCG(1, 1))
		x, y := linearData(rng, bc.n, bc.p, 0.9, 0.1)
		standardise(x)
		md := fitModel(b, framework.Regression, x, y, 1, map[string]string{"epochs": "2"})
		b.Run("Kernel_"+bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := md.Kernel(ctx, x, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("JacobianTVec_"+bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := md.JacobianTVec(ctx, x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
		sk := md.SingleKernel()
		b.Run("KernelSingle_"+bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sk.Kernel(ctx, x, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("JacobianTVecSingle_"+bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sk.JacobianTVec(ctx, x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
