package lazy

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The baseline's Krylov basis preconditions the features' solves. Lanczos
// on the baseline's normal operator Phi_0^T Phi_0 resolves its largest
// eigenvalues first; for a network these are typically hundreds of times
// the penalty, their eigenvectors mostly on the output layer's parameters,
// and they are what cost CG its steps (one step for each outlier). A
// feature that matters little has nearly the baseline's Jacobian, so the
// baseline's Ritz pairs (theta_i, v_i) resolve the same outliers for it: CG
// preconditioned by
//
//	P^-1 = (1/alpha) (I - V V^T) + V (Theta + alpha I)^-1 V^T,
//
// the inverse of alpha I + V Theta V^T, the baseline's operator as far as
// its basis knows it, converges in fewer steps than plain CG. A feature
// that matters has other outliers, and there the baseline's pairs mislead.
// Two rules keep those on plain CG. Before the solve: a feature whose
// penalty is below a fraction of the baseline's (config.precondWhen, half)
// is not preconditioned, since the part of the spectrum the baseline's
// basis did not resolve lies below about the baseline's penalty, where its
// own solve stopped, and a much smaller penalty exposes more of it. After
// the first step: when the residual's bound (below) is still above
// precondFit times the decrease achieved, the pairs do not fit, and the
// plain solve starts from 0 (one step lost).
//
// The stopping rule is a guarantee whatever the preconditioner: A = Phi^T
// Phi + alpha I >= alpha I, so the energy error of an iterate w,
// ||w - w*||^2_A = r^T A^-1 r, is at most ||r||^2 / alpha for its residual
// r = Phi^T e - A w, and the preconditioned solve stops when that bound is
// at most tau times the decrease achieved, J(0) - J(w) = b^T w + w^T r:
// the rule of the plain solve (solveEnergy), with the residual's bound in
// place of the Gauss-Radau one, which needs a lower bound of the
// preconditioned spectrum that the baseline's pairs do not give.

// precondMaxSteps bounds the preconditioned solve's steps; a solve that
// has not met the rule by then starts again unpreconditioned
// (precondSolve). Where the pairs fit, a few steps do.
const precondMaxSteps = 16

// precondFit is how far above the decrease achieved the residual's bound
// may be after the preconditioned solve's first step: above it, the
// baseline's pairs do not fit the feature's operator, and the plain solve
// starts from 0 (precondSolve). Where preconditioning pays, the ratio after
// the first step is below 1; where it costs steps, it is several times
// precondFit or more, so that the rule tells the two apart.
const precondFit = 2.0

// carryMaxPairs bounds the Ritz pairs a baseline carries: the largest
// Ritz values' pairs, the outliers that cost CG its steps and that
// Lanczos resolves first. A baseline's Carry is held, for each fold of
// the run (nine under the default 3x3 cross-fit), until the run ends and
// written to its checkpoint (about 22 bytes a value); without a bound a
// baseline whose solve took maxBasisSteps (256 or more) would carry
// 256 m values a fold. Baselines' solves typically take well under 32
// steps. config.carryMaxValues bounds the Carry's values too.
const carryMaxPairs = 32

// ritzCarry returns the Ritz pairs of the basis kr (a Krylov basis of the
// normal operator of m parameters, the baseline's) as a baseline's Carry:
// p, then p Ritz values, then their p Ritz vectors of m values each, the
// pairs of the p = min(k, carryMaxPairs, maxValues / m) largest of
// the k Ritz values; nil when there is no basis, p is 0 or a pair is not
// finite.
func ritzCarry(kr *krylov, m, maxValues int) []float64 {
	k := kr.steps()
	if k == 0 || kr.bad || len(kr.q) < k*m {
		return nil
	}
	var es mat.EigenSym
	if !es.Factorize(kr.tridiagonal(), true) {
		return nil
	}
	var s mat.Dense
	es.VectorsTo(&s)
	p := min(k, carryMaxPairs, maxValues/m)
	if p == 0 {
		return nil
	}
	out := make([]float64, 1+p+p*m)
	out[0] = float64(p)
	copy(out[1:1+p], es.Values(nil)[k-p:]) // ascending: the p largest
	v := mat.NewDense(p, m, out[1+p:])
	v.Mul(s.Slice(0, k, k-p, k).T(), mat.NewDense(k, m, kr.q[:k*m]))
	for _, x := range out {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	return out
}

// tridiagonal returns the basis's T_k (its Ritz values are T's
// eigenvalues).
func (kr *krylov) tridiagonal() *mat.SymDense {
	k := kr.steps()
	t := mat.NewSymDense(k, nil)
	for i := 0; i < k; i++ {
		t.SetSym(i, i, kr.diag[i])
		if i+1 < k {
			t.SetSym(i, i+1, kr.off[i])
		}
	}
	return t
}

// ritzPrecond is P^-1 for the Ritz pairs of a baseline's Carry at a
// penalty alpha: only the pairs with theta > 0 count.
type ritzPrecond struct {
	alpha float64
	theta []float64
	v     [][]float64 // views of the carry
}

// newRitzPrecond decodes carry (ritzCarry's) for m parameters; nil when it
// is not a carry of that size.
func newRitzPrecond(carry []float64, m int, alpha float64) *ritzPrecond {
	if len(carry) == 0 {
		return nil
	}
	k := int(carry[0])
	if float64(k) != carry[0] || k < 1 || len(carry) != 1+k+k*m {
		return nil
	}
	p := &ritzPrecond{alpha: alpha}
	for i := 0; i < k; i++ {
		if th := carry[1+i]; th > 0 {
			p.theta = append(p.theta, th)
			p.v = append(p.v, carry[1+k+i*m:1+k+(i+1)*m])
		}
	}
	return p
}

// preconditioner is P^-1 as pcgSolve applies it: the baseline's Ritz
// pairs (ritzPrecond) or the feature's subsample (sketchPrecond).
type preconditioner interface {
	// apply writes P^-1 src into dst.
	apply(dst, src []float64) error
	// flops is the count of one application, besides productFlops.
	flops(m int) float64
	// fits reports whether the solve tests after its first step that the
	// preconditioner fits the operator (precondFit).
	fits() bool
	// productFlops is the flops of the Jacobian products its
	// applications took so far.
	productFlops() float64
	// bound is an upper bound of r^T A^-1 r for the residual r that
	// apply was last given: the energy error of its iterate.
	bound(r []float64) float64
}

// apply writes P^-1 src into dst.
func (p *ritzPrecond) apply(dst, src []float64) error {
	floats.ScaleTo(dst, 1/p.alpha, src)
	for i, v := range p.v {
		floats.AddScaled(dst, floats.Dot(v, src)*(1/(p.theta[i]+p.alpha)-1/p.alpha), v)
	}
	return nil
}

// flops is the count of one application: a dot and an update per pair.
func (p *ritzPrecond) flops(m int) float64 { return float64(m) * (1 + 4*float64(len(p.v))) }

// fits is true: a baseline's pairs may not fit a feature's operator.
func (p *ritzPrecond) fits() bool { return true }

// productFlops is 0: the pairs are held.
func (p *ritzPrecond) productFlops() float64 { return 0 }

// bound is ||r||^2 / alpha: A >= alpha I.
func (p *ritzPrecond) bound(r []float64) float64 { return floats.Dot(r, r) / p.alpha }

// pcgResult is where a preconditioned solve stopped: the last iterate w,
// its residual r = rhs - (Phi^T Phi + alpha I) w and the decrease J(0) -
// J(w) = rhs^T w + w^T r, the steps taken, the flops of the
// preconditioner and the vector updates (the products' are the
// operator's), and whether the rule was met (done).
type pcgResult struct {
	w, r     []float64
	decrease float64
	steps    int
	flops    float64
	done     bool
}

// pcgSolve runs CG on the normal equations (Phi^T Phi + alpha I) w = rhs
// (rhs = Phi^T e) preconditioned by pre, from 0, until the residual's
// bound on the energy error is at most tau times the decrease achieved
// (see above: done). It stops early, not done, when a preconditioner that
// may not fit (pre.fits) does not: after the first step the bound above
// precondFit times the decrease; when maxSteps pass; or when the operator turns out not
// positive definite or not finite (at the iterate before).
func pcgSolve(ctx context.Context, op *jacobianOp, rhs []float64, alpha, tau float64, pre preconditioner, maxSteps int) (pcgResult, error) {
	m := len(rhs)
	res := pcgResult{w: make([]float64, m), r: append([]float64(nil), rhs...)}
	if floats.Dot(rhs, rhs) == 0 {
		res.done = true // e orthogonal to Phi's range: no update
		return res, nil
	}
	w, r := res.w, res.r
	z := make([]float64, m)
	if err := pre.apply(z, r); err != nil {
		return res, fmt.Errorf("ridge solve: %w", err)
	}
	d := append([]float64(nil), z...)
	ad := make([]float64, m)
	rz := floats.Dot(r, z)
	res.flops = pre.flops(m)
	for res.steps < maxSteps {
		if res.steps%krylovCheckEvery == krylovCheckEvery-1 {
			if err := ctx.Err(); err != nil {
				return res, fmt.Errorf("ridge solve: %w", err)
			}
		}
		if err := op.mulVec(ad, d); err != nil {
			return res, fmt.Errorf("ridge solve: %w", err)
		}
		floats.AddScaled(ad, alpha, d)
		dad := floats.Dot(d, ad)
		if !(dad > 0) || math.IsInf(dad, 0) {
			return res, nil
		}
		a := rz / dad
		floats.AddScaled(w, a, d)
		floats.AddScaled(r, -a, ad)
		res.steps++
		res.decrease = floats.Dot(rhs, w) + floats.Dot(w, r)
		res.flops += pre.flops(m) + 14*float64(m)
		if err := pre.apply(z, r); err != nil {
			return res, fmt.Errorf("ridge solve: %w", err)
		}
		bound := pre.bound(r)
		if bound <= tau*res.decrease {
			res.done = true
			return res, nil
		}
		if res.steps == 1 && pre.fits() && bound > precondFit*res.decrease {
			return res, nil
		}
		rz2 := floats.Dot(r, z)
		floats.AddScaledTo(d, z, rz2/rz, d)
		rz = rz2
	}
	return res, nil
}
