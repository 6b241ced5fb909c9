//go:build !openblas

package linalg

import (
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"

	"github.com/lazyvi/lazyvi/internal/gemm"
)

const implName = "gonum"

var lapackImpl = lapackgonum.Implementation{}

// The default build runs gonum's BLAS with its general matrix products
// (Dgemm, Sgemm) on internal/gemm's packed AVX2/AVX-512 kernels where the
// CPU has them: gonum's mat and the backends' single-precision products
// both go through it.
func init() {
	blas64.Use(gemm.Implementation{})
	blas32.Use(gemm.Implementation{})
}
