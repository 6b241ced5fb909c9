package rowops

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkRows runs both kernels, vector and portable, on the shapes of a
// (200, 100) network's products on 6667 rows, reporting nanoseconds per
// element.
func BenchmarkRows(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	defer func(v bool) { vector = v }(vector)
	have := vector // the build, the CPU and LAZYVI_CPU allow the kernels
	for _, w := range []int{200, 100} {
		n := 6667
		d, t := random(rng, n, w, 0), random(rng, n, w, 0)
		dst := random(rng, n, w, 0)
		a := make([]float32, n)
		acc := make([]float64, n)
		bias, sums := make([]float64, w), make([]float64, w)
		for _, v := range []bool{false, true} {
			if v && !have {
				continue
			}
			vector = v
			b.Run(fmt.Sprintf("ScaleRows/w=%d/vector=%v", w, v), func(b *testing.B) {
				for b.Loop() {
					ScaleRows(dst, d, a, sums)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*w), "ns/elem")
			})
			b.Run(fmt.Sprintf("AddRowDots/w=%d/vector=%v", w, v), func(b *testing.B) {
				for b.Loop() {
					AddRowDots(acc, d, t, bias)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n*w), "ns/elem")
			})
		}
	}
}
