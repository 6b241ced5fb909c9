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
	// R^-1 R^-T in pivoted order (one matrix product), then scattered.
	rr := blas64.General{Rows: r, Cols: r, Stride: max(r, 1), Data: make([]float64, r*r)}
	if r > 0 {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, s.rinv, s.rinv, 0, rr)
	}
	cov := make([]float64, q*q)
	for k := 0; k < r; k++ {
		i := s.piv[k]
		for l := 0; l < r; l++ {
			cov[i*q+s.piv[l]] = rr.Data[k*rr.Stride+l]
		}
	}
	return cov
}

// wide reports whether a design of m rows and q columns has more columns
// than rows: its least-squares problem is then solved in the m-dimensional
// dual (solveRidgeDual) or by a QR of the m x q design, and the q x q
// covariance, which would dominate the fit's time and memory, is not
// formed.
func wide(m, q int) bool { return q > m }

// solveRidgeDual solves min ||a theta - b||^2 + ridge ||theta_{1..q-1}||^2
// (ridge > 0) for a (m x q) whose column 0 is the unpenalised intercept's,
// in the m-dimensional dual: with u the intercept column and C the other
// columns with u projected out, the slopes are C^T (C C^T + ridge I)^-1 b_c
// (b_c: b with u projected out) and the intercept u.(b - A_1 slopes)/u.u.
// Time O(m^2 q + m^3), memory O(m q), against the primal's (m+q) x q QR.
// With withTrace it also returns the trace of the hat matrix of the fit,
// 1 + trace(K (K + ridge I)^-1) with K = C C^T, for the residual degrees
// of freedom (an inverse of the factor, O(m^3) more); without, 0.
func solveRidgeDual(a blas64.General, b []float64, ridge float64, withTrace bool) (theta []float64, traceH float64, ok bool) {
	m, q := a.Rows, a.Cols
	p := q - 1
	uu, ub := 0.0, 0.0
	for i := 0; i < m; i++ {
		u := a.Data[i*a.Stride]
		uu += u * u
		ub += u * b[i]
	}
	if !(uu > 0) {
		return nil, 0, false
	}
	// w = A_1^T u / u.u, C = A_1 - u w^T, b_c = b - u (u.b)/u.u.
	w := make([]float64, p)
	for i := 0; i < m; i++ {
		u := a.Data[i*a.Stride] / uu
		blas64.Axpy(u, blas64.Vector{N: p, Inc: 1, Data: a.Data[i*a.Stride+1 : i*a.Stride+q]}, blas64.Vector{N: p, Inc: 1, Data: w})
	}
	c := blas64.General{Rows: m, Cols: p, Stride: max(p, 1), Data: make([]float64, m*p)}
	bc := make([]float64, m)
	for i := 0; i < m; i++ {
		u := a.Data[i*a.Stride]
		row := c.Data[i*c.Stride : i*c.Stride+p]
		copy(row, a.Data[i*a.Stride+1:i*a.Stride+q])
		blas64.Axpy(-u, blas64.Vector{N: p, Inc: 1, Data: w}, blas64.Vector{N: p, Inc: 1, Data: row})
		bc[i] = b[i] - u*ub/uu
	}
	// K + ridge I = C C^T + ridge I, its Cholesky factor, alpha.
	k := blas64.Symmetric{Uplo: blas.Upper, N: m, Stride: m, Data: make([]float64, m*m)}
	blas64.Syrk(blas.NoTrans, 1, c, 0, k)
	for i := 0; i < m; i++ {
		k.Data[i*m+i] += ridge
	}
	t, ok := lapack64.Potrf(k)
	if !ok {
		return nil, 0, false
	}
	alpha := blas64.General{Rows: m, Cols: 1, Stride: 1, Data: bc}
	lapack64.Potrs(t, alpha)
	theta = make([]float64, q)
	blas64.Gemv(blas.Trans, 1, c, blas64.Vector{N: m, Inc: 1, Data: alpha.Data}, 0, blas64.Vector{N: p, Inc: 1, Data: theta[1:]})
	theta[0] = ub/uu - blas64.Dot(blas64.Vector{N: p, Inc: 1, Data: w}, blas64.Vector{N: p, Inc: 1, Data: theta[1:]})
	if !withTrace {
		return theta, 0, true
	}
	// trace(K (K + ridge I)^-1) = m - ridge trace((K + ridge I)^-1).
	inv, ok := lapack64.Potri(t)
	if !ok {
		return nil, 0, false
	}
	traceH = 1 + float64(m)
	for i := 0; i < m; i++ {
		traceH -= ridge * inv.Data[i*inv.Stride+i]
	}
	return theta, traceH, true
}
