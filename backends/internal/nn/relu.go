package nn

import "math"

// BiasReLU sets each row of z (rows of len(b) values, row-major) to
// max(z + b, 0), in z's precision: a negative sum, -0 included, becomes
// +0, and a NaN stays NaN. The builtin max has no data-dependent branch on
// amd64 (as fast as clearing the sign-spread bits, which turned amd64's
// NaN of Inf - Inf or 0 x Inf, sign bit set, into a silent 0, and
// arm64's, sign bit clear, into NaN).
func BiasReLU[T float32 | float64](z, b []T) {
	for i := 0; i+len(b) <= len(z); i += len(b) {
		row := z[i : i+len(b)]
		for j, v := range row {
			row[j] = max(v+b[j], 0)
		}
	}
}

// ReLUMask zeroes d where act (a ReLU output, so +0 or positive) is zero,
// without branches: a ReLU's zeros fall at random, and a branch on them
// mispredicts about half the time.
func ReLUMask(d, act []float64) {
	act = act[:len(d)]
	for j, a := range act {
		b := math.Float64bits(a)
		keep := -((b | -b) >> 63) // all ones when a != 0
		d[j] = math.Float64frombits(math.Float64bits(d[j]) & keep)
	}
}

// ReLUMask32 is ReLUMask in float32.
func ReLUMask32(d, act []float32) {
	act = act[:len(d)]
	for j, a := range act {
		b := math.Float32bits(a)
		keep := -((b | -b) >> 31) // all ones when a != 0
		d[j] = math.Float32frombits(math.Float32bits(d[j]) & keep)
	}
}
