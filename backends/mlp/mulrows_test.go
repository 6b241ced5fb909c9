package mlp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
)

// TestMulRows32Alignment checks that a one-output layer's T = a w^T has
// the same bits wherever a, w and t lie in memory (offsets of 0 to 7
// float32s, the vector kernels' widths), and that each entry is the
// float64 sum rounded once to float32: within a float32 rounding of the
// exact dot plus in float64 roundings of the sum of |terms|.
func TestMulRows32Alignment(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, in := range []int{1, 7, 8, 33, 100} {
		const rows = 37
		a0 := make([]float32, rows*in)
		w0 := make([]float32, in)
		for i := range a0 {
			a0[i] = float32(rng.NormFloat64())
		}
		for i := range w0 {
			w0[i] = float32(rng.NormFloat64())
		}
		var want []float32
		for off := range 8 {
			ab := make([]float32, off+len(a0))
			wb := make([]float32, off+in)
			copy(ab[off:], a0)
			copy(wb[off:], w0)
			a := blas32.General{Rows: rows, Cols: in, Stride: in, Data: ab[off:]}
			w := blas32.General{Rows: 1, Cols: in, Stride: in, Data: wb[off:]}
			tb := make([]float32, off+rows)
			tg := blas32.General{Rows: rows, Cols: 1, Stride: 1, Data: tb[off:]}
			mulRows32(a, w, tg, make([]float64, in+rows))
			if want == nil {
				want = append([]float32(nil), tg.Data...)
				for i := range rows {
					exact, abs := 0.0, 0.0
					for j := range in {
						p := float64(a0[i*in+j]) * float64(w0[j])
						exact += p
						abs += math.Abs(p)
					}
					bound := math.Abs(exact)*0x1p-24 + float64(in)*0x1p-53*abs*1.01 + 1e-300
					if d := math.Abs(float64(want[i]) - exact); d > bound {
						t.Fatalf("in %d row %d: %g, exact %g: off by %g > %g", in, i, want[i], exact, d, bound)
					}
				}
				continue
			}
			for i, v := range tg.Data {
				if math.Float32bits(v) != math.Float32bits(want[i]) {
					t.Fatalf("in %d, offset %d, row %d: %g, at offset 0 %g", in, off, i, v, want[i])
				}
			}
		}
	}
}
