package lazy

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/internal/gemm"
	"github.com/lazyvi/lazyvi/internal/timing"
)

// krylovTol is the normwise backward error at which a shifted solution is
// accepted: the returned x solves (A + sigma I + E) x = r + f exactly with
// ||E|| <= krylovTol (||A|| + sigma) and ||f|| <= krylovTol ||r||, a
// perturbation far below the noise of any Gram or kernel built from data (a
// Cholesky solve's is ~n eps).
const krylovTol = 1e-10

// krylovCheckEvery is how many Lanczos steps run between checks of the
// context.
const krylovCheckEvery = 16

// krylov solves (A + sigma I) x = r for many shifts sigma >= 0 of one
// symmetric positive semi-definite A from a single Lanczos basis
// Q_k = [q_0 .. q_{k-1}] of the Krylov space span{r, A r, ..., A^{k-1} r}:
// A Q_k = Q_k T_k + beta_k q_k e_k^T with T_k tridiagonal, so for every
// shift x = Q_k (T_k + sigma I)^-1 e_1 ||r|| with residual norm
// beta_k |e_k^T (T_k + sigma I)^-1 e_1| ||r||, known without forming x.
// The basis grows on demand, only until every shift asked for meets
// krylovTol; the basis is kept orthogonal to working precision by
// reorthogonalising each new vector against all earlier ones, so that at
// k = n (or when the space becomes invariant) the solutions are those of a
// direct solver. Each step costs one product with A (2 n^2 flops) and
// 2-4 k n for the reorthogonalisation; penalties that matter in ridge
// regression are large enough that k stays far below n, which is what
// makes this cheaper than a tridiagonal reduction of A (8/3 n^3 flops)
// that serves the same purpose. A krylov is used by one goroutine at a
// time.
type krylov struct {
	a     operator // A
	n     int
	q     []float64 // basis vectors as rows, k x n
	diag  []float64 // T's diagonal
	off   []float64 // off[j] = beta_{j+1}: T's off-diagonal, then the residual coupling
	beta0 float64   // ||r||
	exact bool      // the basis spans an invariant subspace (or all of R^n)
	bad   bool      // A or r is not finite: nothing can be solved
	anorm float64   // running estimate of ||A||_2 (largest Gershgorin bound of T)
	flops float64   // counted: the dense operators' products and the orthogonalisation
	w, h  []float64
	// tridiagonal scratch
	dl, dd, du, y []float64
}

// operator is a symmetric matrix as the Krylov solver uses it: products
// with vectors.
type operator interface {
	dim() int
	mulVec(dst, x []float64) error // dst = A x
}

// denseOp marks the operators whose products are with a matrix held in
// memory, 2 n^2 flops each (the matrix-free operator counts its own).
type denseOp interface{ dense() }

func (fullOp) dense()  {}
func (upperOp) dense() {}
func (holeOp) dense()  {}

// fullOp is A stored with both triangles: a product is a Gemv, faster than
// a Symv.
type fullOp struct{ a blas64.General }

func (o fullOp) dim() int { return o.a.Rows }
func (o fullOp) mulVec(dst, x []float64) error {
	blas64.Gemv(blas.NoTrans, 1, o.a, blas64.Vector{N: len(x), Data: x, Inc: 1}, 0, blas64.Vector{N: len(dst), Data: dst, Inc: 1})
	return nil
}

// upperOp is A stored as its upper triangle.
type upperOp struct{ a blas64.Symmetric }

func (o upperOp) dim() int { return o.a.N }
func (o upperOp) mulVec(dst, x []float64) error {
	blas64.Symv(1, o.a, blas64.Vector{N: len(x), Data: x, Inc: 1}, 0, blas64.Vector{N: len(dst), Data: dst, Inc: 1})
	return nil
}

// holeOp is K without rows and columns lo..hi, K stored with both
// triangles: a cross-validation fold's training block, used in place
// (four Gemvs on views of K) rather than copied. Where k32 is set (K's
// values rounded to float32, laid out as k), the products read it
// instead, in float64 arithmetic (gemm.Gemv32): half the bytes, which a
// product with a matrix this size waits on.
type holeOp struct {
	k      blas64.General
	k32    []float32
	lo, hi int
}

func (o holeOp) dim() int { return o.k.Rows - (o.hi - o.lo) }
func (o holeOp) mulVec(dst, x []float64) error {
	n, lo, hi := o.k.Rows, o.lo, o.hi
	// gemv sets y = K[r0:r1, c0:c1] x + beta y.
	gemv := func(r0, r1, c0, c1 int, x []float64, beta float64, y []float64) {
		if o.k32 != nil {
			gemm.Gemv32(r1-r0, c1-c0, 1, o.k32[r0*o.k.Stride+c0:], o.k.Stride, x, beta, y)
			return
		}
		a := blas64.General{Rows: r1 - r0, Cols: c1 - c0, Stride: o.k.Stride, Data: o.k.Data[r0*o.k.Stride+c0:]}
		blas64.Gemv(blas.NoTrans, 1, a, blas64.Vector{N: len(x), Data: x, Inc: 1}, beta, blas64.Vector{N: len(y), Data: y, Inc: 1})
	}
	xa, xc := x[:lo], x[lo:]
	ya, yc := dst[:lo], dst[lo:]
	for i := range dst {
		dst[i] = 0
	}
	if lo > 0 {
		gemv(0, lo, 0, lo, xa, 0, ya)
		if hi < n {
			gemv(0, lo, hi, n, xc, 1, ya)
			gemv(hi, n, 0, lo, xa, 0, yc)
		}
	}
	if hi < n {
		gemv(hi, n, hi, n, xc, 1, yc)
	}
	return nil
}

// newKrylov starts the solver for A (not copied: it must not change while
// the solver is used) and r.
func newKrylov(a operator, r []float64) *krylov {
	kr := &krylov{a: a, n: a.dim()}
	n := kr.n
	kr.w, kr.h = make([]float64, n), make([]float64, n)
	kr.beta0 = blas64.Nrm2(blas64.Vector{N: n, Data: r, Inc: 1})
	switch {
	case math.IsNaN(kr.beta0) || math.IsInf(kr.beta0, 0):
		kr.bad, kr.exact = true, true
		return kr
	case kr.beta0 == 0 || n == 0:
		kr.exact = true
		return kr
	}
	q0 := make([]float64, n, 16*n)
	for i, v := range r {
		q0[i] = v / kr.beta0
	}
	kr.q = q0
	return kr
}

// steps is the size of the basis so far.
func (kr *krylov) steps() int { return len(kr.diag) }

// extend adds one Lanczos step; it sets exact when the space is invariant,
// and bad when A turns out not to be finite. An error is the operator's.
func (kr *krylov) extend() error {
	n, j := kr.n, len(kr.diag)
	if err := kr.a.mulVec(kr.w, kr.q[j*n:(j+1)*n]); err != nil {
		return err
	}
	if _, dense := kr.a.(denseOp); dense {
		kr.flops += 2 * float64(n) * float64(n)
	}
	wv := blas64.Vector{N: n, Data: kr.w, Inc: 1}
	// Full reorthogonalisation against q_0..q_j (classical Gram-Schmidt,
	// repeated once when it cancelled much of w: "twice is enough").
	basis := blas64.General{Rows: j + 1, Cols: n, Stride: n, Data: kr.q[:(j+1)*n]}
	hv := blas64.Vector{N: j + 1, Data: kr.h[:j+1], Inc: 1}
	before := blas64.Nrm2(wv)
	alpha := 0.0 // q_j^T A q_j, the projection on q_j
	for pass := 0; pass < 2; pass++ {
		blas64.Gemv(blas.NoTrans, 1, basis, wv, 0, hv)
		blas64.Gemv(blas.Trans, -1, basis, hv, 1, wv)
		alpha += kr.h[j]
		kr.flops += 4 * float64(j+1) * float64(n)
		after := blas64.Nrm2(wv)
		if after > 0.7*before {
			break
		}
		before = after
	}
	beta := blas64.Nrm2(wv)
	if math.IsNaN(alpha+beta) || math.IsInf(alpha+beta, 0) {
		kr.bad, kr.exact = true, true
		return nil
	}
	kr.diag = append(kr.diag, alpha)
	kr.off = append(kr.off, beta)
	g := math.Abs(alpha) + beta
	if j > 0 {
		g += kr.off[j-1]
	}
	kr.anorm = math.Max(kr.anorm, g)
	if j+1 == n || beta <= float64(n)*eps*kr.anorm {
		kr.exact = true
		return nil
	}
	start := len(kr.q)
	kr.q = append(kr.q, kr.w...)
	blas64.Scal(1/beta, blas64.Vector{N: n, Data: kr.q[start:], Inc: 1})
	return nil
}

const eps = 0x1p-52

// coefficients solves (T_k + sigma I) y = beta0 e_1 into kr.y and returns
// the normwise backward error of x = Q_k y, and false when the tridiagonal
// system cannot be solved or gives a solution larger than any system with
// a smallest eigenvalue above eps ||A|| can (singular to working
// precision), or A is not finite. Without a shift, a singular A and an r
// outside its range can still give a huge solution with a small backward
// error before the space is exhausted; lazy always shifts.
func (kr *krylov) coefficients(sigma float64) (backward float64, ok bool) {
	k := len(kr.diag)
	if kr.bad || k == 0 {
		return math.Inf(1), false
	}
	if cap(kr.y) < k {
		c := max(2*k, 16)
		kr.dl, kr.dd, kr.du, kr.y = make([]float64, c), make([]float64, c), make([]float64, c), make([]float64, c)
	}
	dl, dd, du, y := kr.dl[:k], kr.dd[:k], kr.du[:k], kr.y[:k]
	for i := range y {
		dd[i] = kr.diag[i] + sigma
		y[i] = 0
	}
	copy(dl, kr.off[:k])
	copy(du, kr.off[:k])
	y[0] = kr.beta0
	if !lapackImpl.Dgtsv(k, 1, dl[:max(k-1, 0)], dd, du[:max(k-1, 0)], y, 1) {
		return math.Inf(1), false
	}
	xnorm := 0.0
	for _, v := range y {
		xnorm += v * v
	}
	xnorm = math.Sqrt(xnorm)
	// ||x|| <= ||r|| / lambda_min(A + sigma I): a larger one means a
	// smallest eigenvalue below eps ||A||, a singular system.
	if math.IsNaN(xnorm) || math.IsInf(xnorm, 0) || xnorm*eps*(kr.anorm+sigma) > kr.beta0 {
		return math.Inf(1), false
	}
	if kr.exact {
		return 0, true
	}
	res := kr.off[k-1] * math.Abs(y[k-1])
	return res / ((kr.anorm+sigma)*xnorm + kr.beta0), true
}

// grow extends the basis until accept (called after each step, and before
// the first) says the current solution will do, the space is exhausted or
// maxSteps are taken, checking ctx every krylovCheckEvery steps; it
// reports whether accept did.
func (kr *krylov) grow(ctx context.Context, maxSteps int, accept func() bool) (bool, error) {
	for {
		if accept() {
			return true, nil
		}
		if kr.exact || kr.steps() >= maxSteps {
			return false, nil
		}
		if kr.steps()%krylovCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return false, fmt.Errorf("ridge solve: %w", err)
			}
		}
		if err := kr.extend(); err != nil {
			return false, fmt.Errorf("ridge solve: %w", err)
		}
	}
}

// meetsBackward reports whether sigma's solution meets the backward error
// tolerance (or the space is exhausted), leaving its coefficients in kr.y.
func (kr *krylov) meetsBackward(sigma float64) bool {
	be, ok := kr.coefficients(sigma)
	return ok && (be <= krylovTol || kr.exact)
}

// solution is x = Q_k y for the coefficients in kr.y.
func (kr *krylov) solution() []float64 {
	k, n := kr.steps(), kr.n
	x := make([]float64, n)
	basis := blas64.General{Rows: k, Cols: n, Stride: n, Data: kr.q[:k*n]}
	blas64.Gemv(blas.Trans, 1, basis, blas64.Vector{N: k, Data: kr.y[:k], Inc: 1}, 0, blas64.Vector{N: n, Data: x, Inc: 1})
	return x
}

// decrease is, after coefficients(sigma), the decrease of the quadratic
// x^T (A + sigma I) x - 2 r^T x from x = 0 to the Galerkin solution
// x_k = Q_k y_k: r^T x_k = ||r|| y_k[0] (= x_k^T (A + sigma I) x_k). It
// grows with k towards r^T x*, and the gap is the error's energy:
// ||x* - x_k||^2_{A + sigma I} = r^T x* - r^T x_k (for CG, which x_k is;
// Strakos and Tichy, On error estimation in the conjugate gradient method
// and why it works in finite precision computations, ETNA 13, 2002).
func (kr *krylov) decrease() float64 { return kr.beta0 * kr.y[0] }

// radauDecrease is an upper bound on r^T x*, the decrease at the exact
// solution, from the Gauss-Radau rule with a node prescribed at sigma, a
// lower bound of the spectrum of A + sigma I (A is positive semi-definite):
// ||r||^2 e_1^T U^-1 e_1 with U = [T_k + sigma I, beta_k e_k; beta_k e_k^T,
// omega], omega = sigma + delta_k for T_k delta = beta_k^2 e_k, so that
// sigma is an eigenvalue of U (Golub and Meurant, Matrices, Moments and
// Quadrature with Applications, 2010, ch. 6; for CG, Meurant and Tichy,
// Error Norm Estimation in the Conjugate Gradient Algorithm, SIAM, 2024).
// It reports false when a tridiagonal system cannot be solved.
func (kr *krylov) radauDecrease(sigma float64) (float64, bool) {
	k := len(kr.diag)
	bk := kr.off[k-1]
	dl, dd, du := make([]float64, k+1), make([]float64, k+1), make([]float64, k+1)
	z := make([]float64, k+1)
	copy(dd, kr.diag)
	copy(dl, kr.off[:k-1])
	copy(du, kr.off[:k-1])
	z[k-1] = bk * bk
	if !lapackImpl.Dgtsv(k, 1, dl[:k-1], dd[:k], du[:k-1], z[:k], 1) {
		return 0, false
	}
	omega := sigma + z[k-1]
	for i := range z {
		z[i] = 0
	}
	for i := 0; i < k; i++ {
		dd[i] = kr.diag[i] + sigma
	}
	dd[k] = omega
	copy(dl, kr.off[:k])
	copy(du, kr.off[:k])
	z[0] = kr.beta0
	if !lapackImpl.Dgtsv(k+1, 1, dl[:k], dd, du[:k], z, 1) {
		return 0, false
	}
	return kr.beta0 * z[0], true
}

// solveEnergy returns sigma's solution x_k once its energy error,
// ||x* - x_k||^2_{A + sigma I} = r^T x* - decrease_k, is at most tau times
// the decrease achieved, decrease_k, by the Gauss-Radau upper bound on
// r^T x* (radauDecrease): the rule is a guarantee, in exact arithmetic,
// not an estimate. It reports false, with no solution, when maxSteps pass
// first or the system cannot be solved.
func (kr *krylov) solveEnergy(ctx context.Context, sigma, tau float64, maxSteps int) ([]float64, bool, error) {
	return kr.solveEnergyFrom(ctx, sigma, tau, 0, maxSteps)
}

// solveEnergyFrom is solveEnergy for a correction: r is the residual
// b - (A + sigma I) x0 of a start x0 and the solution x_k the correction
// to it, and before is the decrease from 0 to x0 of the quadratic in b
// (J(0) - J(x0) for the ridge objective J), so that the rule bounds the
// energy error of x0 + x_k by tau times its whole decrease from 0, as a
// solve from 0 does (before 0).
func (kr *krylov) solveEnergyFrom(ctx context.Context, sigma, tau, before float64, maxSteps int) ([]float64, bool, error) {
	return kr.solveUntil(ctx, maxSteps, func() bool {
		if kr.steps() == 0 {
			return false
		}
		if _, ok := kr.coefficients(sigma); !ok {
			return false
		}
		if kr.exact {
			return true
		}
		ub, ok := kr.radauDecrease(sigma)
		return ok && ub-kr.decrease() <= tau*(before+kr.decrease())
	})
}

// solveUntil grows the basis until accept (which leaves the solution's
// coefficients in kr.y) holds, within maxSteps steps, and returns that
// solution; false, with no solution, when it does not hold in time. A zero
// right-hand side has the zero solution at once.
func (kr *krylov) solveUntil(ctx context.Context, maxSteps int, accept func() bool) ([]float64, bool, error) {
	if kr.beta0 == 0 {
		return make([]float64, kr.n), true, nil
	}
	if ok, err := kr.grow(ctx, maxSteps, accept); !ok || err != nil {
		return nil, false, err
	}
	return kr.solution(), true, nil
}

// solveMany returns the solutions for each shift as the rows of a
// len(sigmas) x n matrix, growing the basis until each meets krylovTol, and
// whether each system could be solved (a row that could not is zero).
func (kr *krylov) solveMany(ctx context.Context, sigmas []float64) (*mat.Dense, []bool, error) {
	n := kr.n
	x := mat.NewDense(len(sigmas), n, nil)
	usable := make([]bool, len(sigmas))
	if kr.beta0 == 0 {
		for c := range usable {
			usable[c] = true
		}
		return x, usable, nil
	}
	for _, s := range sigmas {
		if _, err := kr.grow(ctx, n, func() bool { return kr.meetsBackward(s) }); err != nil {
			return nil, nil, err
		}
	}
	k := kr.steps()
	if k == 0 {
		return x, usable, nil // A or r not finite
	}
	ys := mat.NewDense(len(sigmas), k, nil)
	for c, s := range sigmas {
		if _, ok := kr.coefficients(s); ok {
			usable[c] = true
			copy(ys.RawRowView(c), kr.y[:k])
		}
	}
	x.Mul(ys, mat.NewDense(k, n, kr.q[:k*n]))
	return x, usable, nil
}

// solveWithin returns the solution for one shift if it meets krylovTol
// within maxSteps steps.
func (kr *krylov) solveWithin(ctx context.Context, sigma float64, maxSteps int) ([]float64, bool, error) {
	return kr.solveUntil(ctx, maxSteps, func() bool { return kr.meetsBackward(sigma) })
}

// shiftedSolve solves (A + sigma I) x = r for one shift: by the Krylov
// solver on op (A's products, on its own storage) while that is cheaper
// than a Cholesky factorization of a (about n / 6 steps: 2 n^2 flops each
// against n^3 / 3), which it is for the moderate penalties
// cross-validation picks (10 to 60 steps on the paper's settings), else by
// Cholesky. The Krylov basis (at most n/6 x n) is released before the
// factorization.
func shiftedSolve(ctx context.Context, op operator, a *mat.SymDense, sigma float64, r []float64) ([]float64, error) {
	n := a.SymmetricDim()
	kr := newKrylov(op, r)
	x, ok, err := kr.solveWithin(ctx, sigma, n/6)
	timing.From(ctx).Add(stageSolve, 0, kr.flops)
	if err != nil || ok {
		return x, err
	}
	timing.From(ctx).Add(stageSolve, 0, float64(n)*float64(n)*float64(n)/3)
	return choleskySolve(a, sigma, r)
}
