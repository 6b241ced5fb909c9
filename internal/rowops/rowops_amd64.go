//go:build !purego

package rowops

const haveAsm = true

// scaleRowsAVX2 is ScaleRows on the first w8 columns (a multiple of 8) of
// rows rows: strides in elements.
//
//go:noescape
func scaleRowsAVX2(dst *float32, ldDst int, d *float32, ldD int, rows, w8 int, a *float32, sums *float64)

// rowDots4AVX2 sets p[r][l], for the four rows r of d and t from d and t
// (strides in elements), to the sum over columns o = l, l+4, ... below w4
// (a multiple of 4) of float64(d_ro) (float64(t_ro) + b_o), in column
// order: AddRowDots's partial sums before the last columns.
//
//go:noescape
func rowDots4AVX2(d *float32, ldd int, t *float32, ldt int, b *float64, w4 int, p *[4][4]float64)
