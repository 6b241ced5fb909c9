package lazy

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// The subsample preconditions the final solve. The penalty search at scale
// forms the kernel K_s = Phi_s Phi_s^T of a seeded subsample of ns of the
// n1 train rows (subsampleAlpha); scaled by c = n1 / ns, its rows' normal
// operator is a sketch of all the rows' (row sampling: c Phi_s^T Phi_s
// estimates Phi^T Phi without bias), so that
//
//	P = c Phi_s^T Phi_s + alpha I
//
// approximates A = Phi^T Phi + alpha I where it matters: in the directions
// of the large eigenvalues, the outliers above the penalty that cost plain
// CG one step each, which a few hundred rows already resolve, while the
// rest of A's spectrum lies near alpha, where P is alpha I. By Woodbury,
//
//	P^-1 = (1/alpha) (I - Phi_s^T (K_s + (alpha / c) I)^-1 Phi_s),
//
// and alpha / c is the subsample's own penalty, the one its search chose:
// an application is a product with Phi_s and one with Phi_s^T (4 ns M
// flops, ns / n1 of a step's) and a solve with the Cholesky factor of
// K_s + (alpha / c) I, formed once (ns^3 / 3 flops). It is each feature's
// own subsample, so that it fits a feature that matters as well as one
// that does not, where the baseline's Ritz pairs (precond.go) fit only
// the latter. The solve is CG preconditioned by P (pcgSolve), stopped when
// a bound of the energy error by the subsample's rows (bound) is at most
// energyTol of the decrease achieved: the same guarantee as the plain
// solve's. The baseline solves this way too, so that it carries no Ritz
// pairs; they remain for the solves without a subsample (a fixed
// penalty).

// sketchPrecond is P^-1 for a subsample's rows at a penalty alpha.
type sketchPrecond struct {
	op    *jacobianOp // Phi_s's products, counting their flops
	chol  mat.Cholesky
	alpha float64
	ns    int
	// For the bound: the subsample's kernel, the factor of K_s + alpha I
	// (formed on first use), and Phi_s r of the last r applied.
	kmat  *mat.SymDense
	lower *mat.Cholesky
	u     []float64
	extra float64 // flops besides the products and apply's: the bound's
}

// sketch is what the subsample's search leaves for the final solve: the
// subsample's problem (its rows in fold order) and its kernel, whose
// memory release gives back.
type sketch struct {
	sub *problem
	rp  *dual
}

// release gives the sketch's kernel back (see dual.release); a nil sketch
// holds nothing.
func (s *sketch) release() {
	if s != nil && s.rp != nil {
		s.rp.release()
		s.rp = nil
	}
}

// precond returns P^-1 for the penalty alpha of all n1 rows, or nil
// (nothing to precondition by) when the sketch holds no kernel or K_s +
// (alpha ns / n1) I is not positive definite in floating point.
func (s *sketch) precond(ctx context.Context, alpha float64, n1 int) (*sketchPrecond, error) {
	if s == nil || s.rp == nil || s.rp.kmat == nil || s.sub.k != 1 {
		return nil, nil
	}
	ns := s.rp.kmat.SymmetricDim()
	beta := alpha * float64(ns) / float64(n1)
	shifted := mat.NewSymDense(ns, nil)
	shifted.CopySym(s.rp.kmat)
	for i := 0; i < ns; i++ {
		shifted.SetSym(i, i, shifted.At(i, i)+beta)
	}
	pre := &sketchPrecond{alpha: alpha, ns: ns, kmat: s.rp.kmat}
	if !pre.chol.Factorize(shifted) {
		return nil, nil
	}
	op, err := s.sub.jacobianOp(ctx)
	if err != nil {
		return nil, err
	}
	pre.op = op
	return pre, nil
}

// apply writes P^-1 src into dst.
func (p *sketchPrecond) apply(dst, src []float64) error {
	u, err := p.op.mul(src, false)
	if err != nil {
		return fmt.Errorf("subsample preconditioner: %w", err)
	}
	var y mat.VecDense
	if err := p.chol.SolveVecTo(&y, mat.NewVecDense(len(u), u)); err != nil {
		return fmt.Errorf("subsample preconditioner: %w", err)
	}
	t, err := p.op.mul(y.RawVector().Data, true)
	if err != nil {
		return fmt.Errorf("subsample preconditioner: %w", err)
	}
	for i, v := range src {
		dst[i] = (v - t[i]) / p.alpha
	}
	p.u = u
	return nil
}

// bound is an upper bound of r^T A^-1 r for the r apply was last given,
// by the subsample's rows without the scaling: they are some of all the
// rows, so that A = Phi^T Phi + alpha I >= L = Phi_s^T Phi_s + alpha I and
// r^T A^-1 r <= r^T L^-1 r = (||r||^2 - u^T (K_s + alpha I)^-1 u) / alpha
// with u = Phi_s r, apply's product: below ||r||^2 / alpha (A >= alpha I)
// by what the subsample's directions hold of r, which are the directions
// of A's large eigenvalues, where that bound is loosest. It costs a
// Cholesky factorisation of K_s + alpha I, once, and a solve with it.
func (p *sketchPrecond) bound(r []float64) float64 {
	rr := floats.Dot(r, r)
	plain := rr / p.alpha
	if p.u == nil {
		return plain
	}
	if p.lower == nil {
		shifted := mat.NewSymDense(p.ns, nil)
		shifted.CopySym(p.kmat)
		for i := 0; i < p.ns; i++ {
			shifted.SetSym(i, i, shifted.At(i, i)+p.alpha)
		}
		p.lower = new(mat.Cholesky)
		p.extra += float64(p.ns) * float64(p.ns) * float64(p.ns) / 3
		if !p.lower.Factorize(shifted) {
			p.u = nil
			return plain
		}
	}
	var y mat.VecDense
	if err := p.lower.SolveVecTo(&y, mat.NewVecDense(len(p.u), p.u)); err != nil {
		return plain
	}
	p.extra += 2 * float64(p.ns) * float64(p.ns)
	return math.Max(0, rr-floats.Dot(p.u, y.RawVector().Data)) / p.alpha
}

// flops is the count of one application besides its products (the
// operator counts those): the triangular solves and the update.
func (p *sketchPrecond) flops(m int) float64 {
	return 2*float64(p.ns)*float64(p.ns) + 2*float64(m)
}

// fits is false: the subsample is the feature's own, and its solve keeps
// going however far the first step leaves it (pcgSolve).
func (p *sketchPrecond) fits() bool { return false }

// productFlops is the products' flops counted so far, and the bound's.
func (p *sketchPrecond) productFlops() float64 { return p.op.flops + p.extra }
