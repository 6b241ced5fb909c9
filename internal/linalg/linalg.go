// Package linalg chooses the BLAS and LAPACK implementations that lazyvi's
// numerics run on. The default build uses gonum's pure-Go implementations,
// with the general matrix products (Dgemm, Sgemm) on internal/gemm's
// AVX2/AVX-512 kernels where the CPU has them; a build with -tags openblas swaps in OpenBLAS through cgo (see the README).
// Code that calls LAPACK routines gonum's lapack64 package does not wrap
// (Dgtsv) calls them through LAPACK.
package linalg

// Name says which implementation this binary was built with ("gonum" or
// "openblas"), for benchmark reports.
var Name = implName

// LAPACK is the LAPACK implementation for the routines lazyvi calls
// directly.
var LAPACK Lapacker = lapackImpl

// Lapacker is the part of LAPACK that lazyvi calls directly.
type Lapacker interface {
	Dgtsv(n, nrhs int, dl, d, du []float64, b []float64, ldb int) (ok bool)
}
