package nn

import (
	"math"

	"github.com/lazyvi/lazyvi/internal/gemm"
)

// vector reports whether the AVX2 kernels run: the build has them and the
// active product level is AVX2 or above (LAZYVI_CPU=generic turns them off
// with the products').
var vector = haveAsm && gemm.Active() >= gemm.AVX2

// BiasReLU sets each row of z (rows of len(b) values, row-major) to
// max(z + b, 0), in z's precision: a negative sum, -0 included, becomes
// +0, and a NaN stays NaN. The builtin max has no data-dependent branch on
// amd64 (as fast as clearing the sign-spread bits, which turned amd64's
// NaN of Inf - Inf or 0 x Inf, sign bit set, into a silent 0, and
// arm64's, sign bit clear, into NaN).
func BiasReLU[T float32 | float64](z, b []T) {
	done := 0
	if vector && len(b) > 0 && len(z) >= len(b) {
		done = biasReLUVector(z, b)
	}
	if done == len(b) {
		return
	}
	for i := 0; i+len(b) <= len(z); i += len(b) {
		row := z[i+done : i+len(b)]
		for j, v := range row {
			row[j] = max(v+b[done+j], 0)
		}
	}
}

// ReLUMask zeroes d where act (a ReLU output, so +0 or positive) is zero,
// without branches: a ReLU's zeros fall at random, and a branch on them
// mispredicts about half the time.
func ReLUMask(d, act []float64) {
	act = act[:len(d)]
	done := 0
	if vector && len(d) >= 4 {
		done = len(d) &^ 3
		reluMask64AVX2(&d[0], &act[0], done)
	}
	for j, a := range act[done:] {
		b := math.Float64bits(a)
		keep := -((b | -b) >> 63) // all ones when a != 0
		d[done+j] = math.Float64frombits(math.Float64bits(d[done+j]) & keep)
	}
}

// ReLUMask32 is ReLUMask in float32.
func ReLUMask32(d, act []float32) {
	act = act[:len(d)]
	done := 0
	if vector && len(d) >= 8 {
		done = len(d) &^ 7
		reluMask32AVX2(&d[0], &act[0], done)
	}
	for j, a := range act[done:] {
		b := math.Float32bits(a)
		keep := -((b | -b) >> 31) // all ones when a != 0
		d[done+j] = math.Float32frombits(math.Float32bits(d[done+j]) & keep)
	}
}

// biasReLUVector runs BiasReLU's vector kernel on the columns of z's rows
// below the last multiple of the vector's width (4 float64 or 8 float32
// values) and returns that many columns: each value max(z + b, 0) + 0,
// the sum rounded first, VMAXP's result with 0 as its first operand (a
// NaN, its second, stays) and the + 0 turning a -0 into +0, the builtin
// max's values.
func biasReLUVector[T float32 | float64](z, b []T) int {
	rows := len(z) / len(b)
	switch zz := any(z).(type) {
	case []float64:
		w := len(b) &^ 3
		if w > 0 {
			biasReLU64AVX2(&zz[0], rows, len(b), w, &any(b).([]float64)[0])
		}
		return w
	case []float32:
		w := len(b) &^ 7
		if w > 0 {
			biasReLU32AVX2(&zz[0], rows, len(b), w, &any(b).([]float32)[0])
		}
		return w
	}
	return 0
}
