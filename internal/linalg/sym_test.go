package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// SymmetrizeSquare gives each pair of entries 0.5 (a_ij + a_ji), the
// definition's value to the bit, on sizes below, at and across its tiles
// with a stride wider than the rows, and leaves the padding alone.
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
		SymmetrizeSquare(data, n, stride)
		for i := range data {
			if math.Float64bits(data[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n %d: value %d (row %d, column %d) = %v, want %v", n, i, i/stride, i%stride, data[i], want[i])
			}
		}
	}
}
