package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BiasReLU, ReLUMask and ReLUMask32 against their definitions, max(z + b, 0) and
// "zero where the ReLU output is not positive", on random values with
// zeros of both signs among them, bit for bit.
func TestReLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, cols = 50, 7
	z := make([]float64, rows*cols)
	b := make([]float64, cols)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	for j := range b {
		b[j] = rng.NormFloat64()
	}
	z[3], b[3] = math.Copysign(0, -1), 0 // -0 + 0 = +0
	z[9] = -b[2]                         // an exact zero sum (row 1, column 2)
	want := make([]float64, len(z))
	for i, v := range z {
		want[i] = max(v+b[i%cols], 0)
	}
	got := append([]float64(nil), z...)
	BiasReLU(got, b)
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("BiasReLU[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// NaNs of both signs (amd64's Inf - Inf has the sign bit set) stay NaN,
	// as max(NaN, 0) is; infinities are clamped as finite values are.
	negNaN := math.Float64frombits(0xfff8000000000000)
	for _, v := range []float64{negNaN, math.NaN(), math.Inf(1), math.Inf(-1)} {
		got := []float64{v}
		BiasReLU(got, []float64{0})
		if w := max(v, 0); math.IsNaN(w) != math.IsNaN(got[0]) || !math.IsNaN(w) && got[0] != w {
			t.Errorf("BiasReLU(%#x) = %v, want %v", math.Float64bits(v), got[0], w)
		}
	}
	d := make([]float64, len(z))
	for i := range d {
		d[i] = rng.NormFloat64()
	}
	wantD := append([]float64(nil), d...)
	for i, a := range got {
		if !(a > 0) {
			wantD[i] = 0
		}
	}
	ReLUMask(d, got)
	for i := range d {
		if math.Float64bits(d[i]) != math.Float64bits(wantD[i]) {
			t.Fatalf("ReLUMask[%d] = %v, want %v", i, d[i], wantD[i])
		}
	}
	d32, got32 := make([]float32, len(d)), make([]float32, len(got))
	for i := range d32 {
		d32[i], got32[i] = float32(rng.NormFloat64()), float32(got[i])
	}
	want32 := append([]float32(nil), d32...)
	for i, a := range got32 {
		if !(a > 0) {
			want32[i] = 0
		}
	}
	ReLUMask32(d32, got32)
	for i := range d32 {
		if math.Float32bits(d32[i]) != math.Float32bits(want32[i]) {
			t.Fatalf("ReLUMask32[%d] = %v, want %v", i, d32[i], want32[i])
		}
	}
}
