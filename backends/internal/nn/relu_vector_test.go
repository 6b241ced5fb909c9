package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// specials are the values whose handling a vector kernel could change:
// zeros of both signs, infinities and NaNs of both signs.
var specials = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(0xfff8000000000000)}

// TestReLUVector runs BiasReLU (both precisions), ReLUMask and ReLUMask32
// with the vector kernels on and off over widths around the vectors'
// (4 and 8 values), with special values among random ones, and requires
// the same bits (a NaN: a NaN).
func TestReLUVector(t *testing.T) {
	if !vector {
		t.Skip("the vector kernels do not run here (build, CPU or LAZYVI_CPU)")
	}
	defer func(v bool) { vector = v }(vector)
	rng := rand.New(rand.NewPCG(3, 4))
	value := func() float64 {
		if rng.IntN(5) == 0 {
			return specials[rng.IntN(len(specials))]
		}
		return rng.NormFloat64()
	}
	for _, cols := range []int{1, 3, 4, 5, 8, 9, 15, 16, 17, 33} {
		for _, rows := range []int{1, 2, 7} {
			z, b := make([]float64, rows*cols), make([]float64, cols)
			for i := range z {
				z[i] = value()
			}
			for i := range b {
				b[i] = value()
			}
			// -0 + -0 is the one sum that is -0: max(-0, 0) is +0.
			z[0], b[0] = math.Copysign(0, -1), math.Copysign(0, -1)
			d := make([]float64, len(z))
			for i := range d {
				d[i] = value()
			}
			run := func(v bool) (z64, d64 []float64, z32, d32 []float32) {
				vector = v
				z64, d64 = append([]float64(nil), z...), append([]float64(nil), d...)
				z32, d32 = make([]float32, len(z)), make([]float32, len(d))
				b32 := make([]float32, len(b))
				for i := range z {
					z32[i], d32[i] = float32(z[i]), float32(d[i])
				}
				for i := range b {
					b32[i] = float32(b[i])
				}
				BiasReLU(z64, b)
				BiasReLU(z32, b32)
				ReLUMask(d64, z64)
				ReLUMask32(d32, z32)
				return
			}
			wz, wd, wz32, wd32 := run(false)
			gz, gd, gz32, gd32 := run(true)
			for i := range z {
				if !same64(gz[i], wz[i]) || !same64(gd[i], wd[i]) || !same64(float64(gz32[i]), float64(wz32[i])) || !same64(float64(gd32[i]), float64(wd32[i])) {
					t.Fatalf("rows %d cols %d value %d: vector %v %v %v %v, portable %v %v %v %v", rows, cols, i, gz[i], gd[i], gz32[i], gd32[i], wz[i], wd[i], wz32[i], wd32[i])
				}
			}
		}
	}
}

// same64 reports whether a and b have the same bits, or are both NaN.
func same64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}
