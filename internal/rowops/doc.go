// Package rowops holds the row-wise float32 kernels of the mlp backend's
// single-precision Jacobian products: a matrix's rows scaled by a vector,
// with the scaled columns' sums (ScaleRows), and the dots of two matrices'
// rows (AddRowDots), both summed in float64. On a CPU with AVX2, at the
// product level gemm.Active reports, they run on vector kernels that keep
// the portable code's order of operations, so that every level gives the
// same bits.
package rowops
