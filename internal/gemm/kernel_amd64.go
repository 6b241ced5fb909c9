//go:build !purego

package gemm

import "unsafe"

//go:generate sh -c "go run asmgen.go > kernel_amd64.s"

const haveKernels = true

// The micro-kernels of kernel_amd64.s: each updates one tile of C from a
// packed A panel and a B panel, packed or in place (see asmgen.go for the
// arithmetic).

//go:noescape
func kernF64AVX2(k int, a, b, c *float64, ldb, ldc int, beta float64, mode int)

//go:noescape
func kernF32AVX2(k int, a, b, c *float32, ldb, ldc int, beta float32, mode int)

//go:noescape
func kernF64AVX512(k int, a, b, c *float64, ldb, ldc int, beta float64, mode int)

//go:noescape
func kernF32AVX512(k int, a, b, c *float32, ldb, ldc int, beta float32, mode int)

var (
	f64AVX2   = &config[float64]{kern: kernF64AVX2, mr: 6, nr: 8, kc: 256, mc: 192, nc: 1536}
	f32AVX2   = &config[float32]{kern: kernF32AVX2, mr: 6, nr: 16, kc: 256, mc: 384, nc: 3072}
	f64AVX512 = &config[float64]{kern: kernF64AVX512, mr: 12, nr: 16, kc: 256, mc: 192, nc: 1536}
	f32AVX512 = &config[float32]{kern: kernF32AVX512, mr: 12, nr: 32, kc: 256, mc: 384, nc: 3072}
)

func configs(l Level) (*config[float64], *config[float32]) {
	switch l {
	case AVX512:
		return f64AVX512, f32AVX512
	case AVX2:
		return f64AVX2, f32AVX2
	}
	return nil, nil
}

// dot4AVX2 sets p[8r+l], for the four rows r of A from a (lda elements
// apart), to the sum of a_rj x_j over j = l, l+8, ... below n8 (a multiple
// of 8), by fused multiply-adds in j order (see Dgemv).
//
//go:noescape
func dot4AVX2(a *float64, lda int, x *float64, n8 int, p *[32]float64)

// dot4F32AVX2 is dot4AVX2 on a float32 A, each value widened to float64
// (exactly) before its multiply-add (see Gemv32).
//
//go:noescape
func dot4F32AVX2(a *float32, lda int, x *float64, n8 int, p *[32]float64)

// copyRows copies kb rows of width bytes (24, 48 or 96), ld bytes apart
// from src, to consecutive rows at dst, by unaligned vector moves (see
// packRows).
//
//go:noescape
func copyRows(dst, src unsafe.Pointer, ld, kb, width int)

// transpose12x32 packs 12 rows of float32, ld bytes apart from src, as kb4
// (a multiple of 4) steps of the 12 rows' values at dst, by 4 x 4
// transposes in registers (see packTransposed).
//
//go:noescape
func transpose12x32(dst, src unsafe.Pointer, ld, kb4 int)

// transpose12x64 is transpose12x32 for float64.
//
//go:noescape
func transpose12x64(dst, src unsafe.Pointer, ld, kb4 int)

// transpose6x32 is transpose12x32 for 6 rows (the AVX2 micro-kernels').
//
//go:noescape
func transpose6x32(dst, src unsafe.Pointer, ld, kb4 int)

// transpose6x64 is transpose6x32 for float64.
//
//go:noescape
func transpose6x64(dst, src unsafe.Pointer, ld, kb4 int)

// transpose16x32 is transpose12x32 for 16 rows (the AVX2 float32 B
// panels' columns).
//
//go:noescape
func transpose16x32(dst, src unsafe.Pointer, ld, kb4 int)

// transpose8x64 is transpose16x32 for 8 rows of float64 (the AVX2 float64
// B panels' columns).
//
//go:noescape
func transpose8x64(dst, src unsafe.Pointer, ld, kb4 int)

// transposer returns the routine that packs mr rows of values of size
// bytes by 4 x 4 transposes, or nil (as in a build without the
// kernels, kernel_other.go): A's panels of 12 rows (the AVX-512
// micro-kernels') or 6 (the AVX2 ones'), and the AVX2 kernels' B panels
// from a B stored transposed (16 columns of float32, 8 of float64).
func transposer(mr, size int) func(dst, src unsafe.Pointer, ld, kb4 int) {
	switch {
	case mr == 12 && size == 4:
		return transpose12x32
	case mr == 12:
		return transpose12x64
	case mr == 6 && size == 4:
		return transpose6x32
	case mr == 6:
		return transpose6x64
	case mr == 16 && size == 4:
		return transpose16x32
	case mr == 8 && size == 8:
		return transpose8x64
	}
	return nil
}
