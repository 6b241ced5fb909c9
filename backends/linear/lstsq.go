package linear

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// rankTol is the relative size of a pivoted-QR diagonal entry below which
// its column counts as aliased (R's lm uses 1e-7 too).
const rankTol = 1e-7

// lsq is a least-squares solution of a theta ~ b with rank detection.
type lsq struct {
	theta   []float64 // length q; 0 for aliased columns
	aliased []bool
	rank    int
	// rinv is R11^-1 (rank x rank, upper triangular) in pivoted order and
	// piv[k] the original column of pivoted position k: the unscaled
	// covariance (A^T A)^-1 of the non-aliased columns is rinv rinv^T.
	rinv blas64.General
	piv  []int
}

// solveLS solves min ||a theta - b|| by QR with column pivoting (LAPACK's
// Dgeqp3), column 0 (the intercept) kept first. a (m x q, m >= q) and b are
// overwritten.
func solveLS(a blas64.General, b []float64) lsq {
	m, q := a.Rows, a.Cols
	jpvt := make([]int, q)
	for j := range jpvt {
		jpvt[j] = -1
	}
	jpvt[0] = 0 // the intercept leads
	kmax := min(m, q)
	tau := make([]float64, kmax)
	work := make([]float64, 1)
	lapack64.Geqp3(a, jpvt, tau, work, -1)
	work = make([]float64, int(work[0]))
	lapack64.Geqp3(a, jpvt, tau, work, len(work))

	// Numerical rank: diagonal entries of R relative to the largest. The
	// intercept is pivoted first, so the largest need not be R[0,0].
	dmax := 0.0
	for k := 0; k < kmax; k++ {
		dmax = math.Max(dmax, math.Abs(a.Data[k*a.Stride+k]))
	}
	// Free columns come out of the pivoting in decreasing order of their
	// remaining norm, so the rank is the length of the leading run above
	// the tolerance.
	rank := 0
	for rank < kmax {
		d := math.Abs(a.Data[rank*a.Stride+rank])
		if !(d > rankTol*dmax) {
			break
		}
		rank++
	}

	// c = Q^T b.
	c := blas64.General{Rows: m, Cols: 1, Stride: 1, Data: b}
	lapack64.Ormqr(blas.Left, blas.Trans, a, tau, c, work, -1)
	if need := int(work[0]); need > len(work) {
		work = make([]float64, need)
	}
	lapack64.Ormqr(blas.Left, blas.Trans, a, tau, c, work, len(work))

	// R11 coef = c[:rank], and R11^-1.
	r11 := blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: rank, Stride: a.Stride, Data: a.Data}
	coef := make([]float64, rank)
	copy(coef, b[:rank])
	blas64.Trsv(blas.NoTrans, r11, blas64.Vector{N: rank, Inc: 1, Data: coef})
	rinv := blas64.General{Rows: rank, Cols: rank, Stride: max(rank, 1), Data: make([]float64, rank*rank)}
	for i := 0; i < rank; i++ {
		copy(rinv.Data[i*rinv.Stride+i:i*rinv.Stride+rank], a.Data[i*a.Stride+i:i*a.Stride+rank])
	}
	lapack64.Trtri(blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: rank, Stride: rinv.Stride, Data: rinv.Data})

	out := lsq{theta: make([]float64, q), aliased: make([]bool, q), rank: rank, rinv: rinv, piv: jpvt}
	for k := 0; k < q; k++ {
		if k < rank {
			out.theta[jpvt[k]] = coef[k]
		} else {
			out.aliased[jpvt[k]] = true
		}
	}
	return out
}

// unscaledCov returns (A^T A)^-1 on the non-aliased columns in original
// order (q x q, zero rows and columns for aliased ones).
func (s lsq) unscaledCov() []float64 {
	q := len(s.theta)
	r := s.rank
	// (R^-1 R^-T)[k,l] = sum_t rinv[k,t] rinv[l,t], t >= max(k,l).
	cov := make([]float64, q*q)
	for k := 0; k < r; k++ {
		for l := k; l < r; l++ {
			sum := 0.0
			for t := l; t < r; t++ {
				sum += s.rinv.Data[k*s.rinv.Stride+t] * s.rinv.Data[l*s.rinv.Stride+t]
			}
			i, j := s.piv[k], s.piv[l]
			cov[i*q+j] = sum
			cov[j*q+i] = sum
		}
	}
	return cov
}
