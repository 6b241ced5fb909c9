package rowops

import (
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/lazyvi/lazyvi/internal/gemm"
)

// vector reports whether the AVX2 kernels run: the build has them and the
// active product level is AVX2 or above (LAZYVI_CPU=generic turns them off
// with the products').
var vector = haveAsm && gemm.Active() >= gemm.AVX2

// ScaleRows writes d's row i times a[i] into dst's row i (a float32
// product) and adds each scaled value, widened to float64, to sums at its
// column, rows in order. dst and d have len(a) rows and len(sums) columns.
func ScaleRows(dst, d blas32.General, a []float32, sums []float64) {
	w := len(sums)
	done := 0
	if vector && w >= 8 && len(a) > 0 {
		done = w &^ 7
		scaleRowsAVX2(&dst.Data[0], dst.Stride, &d.Data[0], d.Stride, len(a), done, &a[0], &sums[0])
	}
	if done == w {
		return
	}
	for i, ai := range a {
		src := d.Data[i*d.Stride+done : i*d.Stride+w]
		row := dst.Data[i*dst.Stride+done : i*dst.Stride+w]
		s := sums[done:w]
		for o, v := range src {
			x := v * ai
			row[o] = x
			s[o] += float64(x)
		}
	}
}

// AddRowDots adds to acc[i] the dot of d's row i with t's row i plus b,
// in float64: each product float64(d_io) (float64(t_io) + b_o) rounded on
// its own (never fused), the products of columns o = l mod 4 summed into
// the l-th of four partial sums in column order (columns past the last
// multiple of 4 into the first), then (s0 + s1) + (s2 + s3) added to
// acc[i]. d and t have len(acc) rows and len(b) columns.
func AddRowDots(acc []float64, d, t blas32.General, b []float64) {
	w := len(b)
	w4 := w &^ 3
	i := 0
	if vector && w4 > 0 {
		var p [4][4]float64
		for ; i+4 <= len(acc); i += 4 {
			rowDots4AVX2(&d.Data[i*d.Stride], d.Stride, &t.Data[i*t.Stride], t.Stride, &b[0], w4, &p)
			for r := range 4 {
				s := p[r]
				drow := d.Data[(i+r)*d.Stride : (i+r)*d.Stride+w]
				trow := t.Data[(i+r)*t.Stride : (i+r)*t.Stride+w]
				for o := w4; o < w; o++ {
					s[0] += float64(float64(drow[o]) * (float64(trow[o]) + b[o]))
				}
				acc[i+r] += (s[0] + s[1]) + (s[2] + s[3])
			}
		}
	}
	for ; i < len(acc); i++ {
		drow := d.Data[i*d.Stride : i*d.Stride+w]
		trow := t.Data[i*t.Stride : i*t.Stride+w]
		var s0, s1, s2, s3 float64
		o := 0
		for ; o < w4; o += 4 {
			s0 += float64(float64(drow[o]) * (float64(trow[o]) + b[o]))
			s1 += float64(float64(drow[o+1]) * (float64(trow[o+1]) + b[o+1]))
			s2 += float64(float64(drow[o+2]) * (float64(trow[o+2]) + b[o+2]))
			s3 += float64(float64(drow[o+3]) * (float64(trow[o+3]) + b[o+3]))
		}
		for ; o < w; o++ {
			s0 += float64(float64(drow[o]) * (float64(trow[o]) + b[o]))
		}
		acc[i] += (s0 + s1) + (s2 + s3)
	}
}
