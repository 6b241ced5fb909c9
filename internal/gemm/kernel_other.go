//go:build !amd64 || purego

package gemm

import "unsafe"

const haveKernels = false

func configs(Level) (*config[float64], *config[float32]) { return nil, nil }

func dot4AVX2(a *float64, lda int, x *float64, n8 int, p *[32]float64) {
	panic("gemm: no AVX2 kernels in this build")
}

func dot4F32AVX2(a *float32, lda int, x *float64, n8 int, p *[32]float64) {
	panic("gemm: no AVX2 kernels in this build")
}

func copyRows(dst, src unsafe.Pointer, ld, kb, width int) {
	panic("gemm: no AVX2 kernels in this build")
}

// transposer has no routines in this build: packTransposed packs by its
// loop.
func transposer(int, int) func(dst, src unsafe.Pointer, ld, kb4 int) { return nil }
