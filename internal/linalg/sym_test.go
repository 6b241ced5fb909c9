package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SymmetrizeSquare gives each pair of entries 0.5 (a_ij + a_ji), the
// definition's value to the bit, on sizes below, at and across its tiles
// with a stride wider than the rows, and leaves the padding alone;
// SymmetrizeSquare32 gives the same, and each value rounded to float32 in
// its float32 copy, whose padding it leaves alone too.
func TestSymmetrizeSquare(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 63, 64, 65, 150} {
		stride := n + 3
		data := make([]float64, n*stride)
		for i := range data {
			data[i] = rng.NormFloat64()
		}
		want := append([]float64(nil), data...)
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				v := 0.5 * (data[i*stride+j] + data[j*stride+i])
				want[i*stride+j], want[j*stride+i] = v, v
			}
		}
		data32 := append([]float64(nil), data...)
		SymmetrizeSquare(data, n, stride)
		out := make([]float32, len(data))
		for i := range out {
			out[i] = float32(math.NaN())
		}
		SymmetrizeSquare32(data32, n, stride, out)
		for i := range data {
			if math.Float64bits(data[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n %d: value %d (row %d, column %d) = %v, want %v", n, i, i/stride, i%stride, data[i], want[i])
			}
			if math.Float64bits(data32[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n %d: SymmetrizeSquare32's value %d = %v, want %v", n, i, data32[i], want[i])
			}
			switch r, c := i/stride, i%stride; {
			case c >= n && out[i] == out[i]:
				t.Fatalf("n %d: float32 padding %d (row %d, column %d) written: %v", n, i, r, c, out[i])
			case c < n && math.Float32bits(out[i]) != math.Float32bits(float32(want[i])):
				t.Fatalf("n %d: float32 value %d (row %d, column %d) = %v, want %v", n, i, r, c, out[i], float32(want[i]))
			}
		}
	}
}
