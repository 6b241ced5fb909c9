package lazy

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/internal/gemm"
)

// TestHoleOp checks a fold's operator, K without rows and columns lo..hi,
// against the product with that block copied out (to 1e-12), and its
// float32 products (k32) against the float64 ones on K rounded to float32,
// to the bit where the float64 product is internal/gemm's own at a fast
// level (gemm.Gemv32's contract): the rounding is then the only
// difference. At the generic level, or with another BLAS (-tags
// openblas), the float64 product sums in another order, and the two agree
// to the 1e-12 checked first.
func TestHoleOp(t *testing.T) {
	_, ours := blas64.Implementation().(gemm.Implementation)
	sameOrder := ours && gemm.Active() != gemm.Generic
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 37
	k := mat.NewDense(n, n, nil)
	for i := range n {
		for j := range n {
			k.Set(i, j, rng.NormFloat64())
		}
	}
	kg := k.RawMatrix()
	k32 := make([]float32, len(kg.Data))
	kr := mat.NewDense(n, n, nil)
	for i, v := range kg.Data {
		k32[i] = float32(v)
		kr.RawMatrix().Data[i] = float64(k32[i])
	}
	for _, hole := range [][2]int{{0, 9}, {9, 21}, {28, n}} {
		lo, hi := hole[0], hole[1]
		keep := append(rangeInts(0, lo), rangeInts(hi, n)...)
		x := make([]float64, len(keep))
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for _, c := range []struct {
			name string
			op   holeOp
			k    *mat.Dense
			bits bool
		}{
			{"float64", holeOp{k: kg, lo: lo, hi: hi}, k, false},
			{"float32", holeOp{k: kg, k32: k32, lo: lo, hi: hi}, kr, true},
		} {
			got := make([]float64, len(keep))
			if err := c.op.mulVec(got, x); err != nil {
				t.Fatal(err)
			}
			for r, i := range keep {
				want := 0.0
				for s, j := range keep {
					want += c.k.At(i, j) * x[s]
				}
				if d := got[r] - want; d > 1e-12 || d < -1e-12 {
					t.Fatalf("%s, hole %v: row %d: %v, want %v", c.name, hole, r, got[r], want)
				}
			}
			if !c.bits || !sameOrder {
				continue
			}
			want := make([]float64, len(keep))
			if err := (holeOp{k: blas64.General{Rows: n, Cols: n, Stride: n, Data: kr.RawMatrix().Data}, lo: lo, hi: hi}).mulVec(want, x); err != nil {
				t.Fatal(err)
			}
			for r := range want {
				if got[r] != want[r] {
					t.Fatalf("%s, hole %v: row %d: %v, the widened K's product %v", c.name, hole, r, got[r], want[r])
				}
			}
		}
	}
}

func rangeInts(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}
