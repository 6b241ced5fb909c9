package rowops

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
)

// random returns a rows x cols matrix of stride cols+pad, its values of
// mixed signs and magnitudes (so that the order of a sum shows in its
// bits), the padding NaN (a kernel that reads it spoils its results).
func random(rng *rand.Rand, rows, cols, pad int) blas32.General {
	g := blas32.General{Rows: rows, Cols: cols, Stride: cols + pad, Data: make([]float32, max(0, rows*(cols+pad)-pad))}
	for i := range g.Data {
		if i%g.Stride >= cols {
			g.Data[i] = float32(math.NaN())
			continue
		}
		g.Data[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3)))
	}
	return g
}

// scaleRowsRef and addRowDotsRef are the kernels' definitions, element by
// element.
func scaleRowsRef(dst, d blas32.General, a []float32, sums []float64) {
	for i, ai := range a {
		for o := range sums {
			x := d.Data[i*d.Stride+o] * ai
			dst.Data[i*dst.Stride+o] = x
			sums[o] += float64(x)
		}
	}
}

func addRowDotsRef(acc []float64, d, t blas32.General, b []float64) {
	w := len(b)
	for i := range acc {
		var s [4]float64
		for o := 0; o < w; o++ {
			l := o % 4
			if o >= w&^3 {
				l = 0
			}
			p := float64(d.Data[i*d.Stride+o]) * (float64(t.Data[i*t.Stride+o]) + b[o])
			s[l] += p
		}
		acc[i] += (s[0] + s[1]) + (s[2] + s[3])
	}
}

// TestKernelsBits checks both kernels, vector and portable, against their
// definitions bit for bit over shapes around the vector widths, with
// padded strides.
func TestKernelsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	levels := []bool{false}
	if vector {
		levels = append(levels, true)
	}
	defer func(v bool) { vector = v }(vector)
	for _, rows := range []int{0, 1, 3, 4, 5, 9, 17} {
		for _, w := range []int{1, 3, 4, 7, 8, 9, 15, 16, 17, 33, 50, 101} {
			for _, pad := range []int{0, 3} {
				d, tm := random(rng, rows, w, pad), random(rng, rows, w, pad)
				a := make([]float32, rows)
				for i := range a {
					a[i] = float32(rng.NormFloat64())
				}
				b := make([]float64, w)
				for i := range b {
					b[i] = rng.NormFloat64()
				}
				init := make([]float64, max(rows, w))
				for i := range init {
					init[i] = rng.NormFloat64()
				}
				wantDst := blas32.General{Rows: rows, Cols: w, Stride: w + 1, Data: make([]float32, rows*(w+1))}
				wantSums := append([]float64(nil), init[:w]...)
				scaleRowsRef(wantDst, d, a, wantSums)
				wantAcc := append([]float64(nil), init[:rows]...)
				addRowDotsRef(wantAcc, d, tm, b)
				for _, v := range levels {
					vector = v
					dst := blas32.General{Rows: rows, Cols: w, Stride: w + 1, Data: make([]float32, rows*(w+1))}
					sums := append([]float64(nil), init[:w]...)
					ScaleRows(dst, d, a, sums)
					acc := append([]float64(nil), init[:rows]...)
					AddRowDots(acc, d, tm, b)
					for i := range rows {
						for o := range w {
							if g, e := dst.Data[i*dst.Stride+o], wantDst.Data[i*wantDst.Stride+o]; math.Float32bits(g) != math.Float32bits(e) {
								t.Fatalf("ScaleRows rows %d w %d pad %d vector %v: dst[%d][%d] = %v, want %v", rows, w, pad, v, i, o, g, e)
							}
						}
					}
					for o := range w {
						if math.Float64bits(sums[o]) != math.Float64bits(wantSums[o]) {
							t.Fatalf("ScaleRows rows %d w %d pad %d vector %v: sums[%d] = %v, want %v", rows, w, pad, v, o, sums[o], wantSums[o])
						}
					}
					for i := range rows {
						if math.Float64bits(acc[i]) != math.Float64bits(wantAcc[i]) {
							t.Fatalf("AddRowDots rows %d w %d pad %d vector %v: acc[%d] = %v, want %v", rows, w, pad, v, i, acc[i], wantAcc[i])
						}
					}
				}
			}
		}
	}
}
