package lazy

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

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
// flops, ns / n1 of a step's) and a solve with K_s + (alpha / c) I, in
// K_s's dominant directions (sketchPrecond). It is each feature's
// own subsample, so that it fits a feature that matters as well as one
// that does not, where the baseline's Ritz pairs (precond.go) fit only
// the latter. The solve is CG preconditioned by P (pcgSolve), stopped when
// a bound of the energy error by the subsample's rows (bound) is at most
// finalEnergyTol of the decrease achieved: the same guarantee as the plain
// solve's. The baseline solves this way too, so that it carries no Ritz
// pairs; they remain for the solves without a subsample (a fixed penalty)
// and where a step costs less than four times the sketch (sketch.pays).

// sketchPrecond is P^-1 for a subsample's rows at a penalty alpha, in
// the subsample's dominant directions: K_s's range is sketched by a seeded
// Gaussian test matrix (randomized Nystrom, Frangella, Tropp and Udell
// 2023), Q the orthonormal basis of K_s Omega, into B (ns x r, orthonormal
// columns, the eigenvectors of Q^T K_s Q with eigenvalues theta), so that
// Z = Phi_s^T B (not formed) has Z^T Z = diag(theta), and
//
//	P = alpha I + c Z Z^T,  P^-1 = (1/alpha) (I - Z diag(1/(theta + alpha/c)) Z^T).
//
// Two matrix products with K_s (2 ns^2 r flops each) and an r x r
// eigendecomposition, where factoring K_s itself would cost ns^3/3 in
// LAPACK's slowest kernel; the directions beyond the r largest are those
// of eigenvalues near the penalty, where P is alpha I as it should be.
// There is no power step (a third product, K_s Q): the eigenvalues that
// cost CG its steps lie far above the rest, where one product already
// finds their directions.
type sketchPrecond struct {
	op    *jacobianOp // Phi_s's products, counting their flops
	b     *mat.Dense  // B, ns x r
	theta []float64
	alpha float64
	beta  float64 // alpha / c
	// v is B^T Phi_s r of the last r applied, which bound uses.
	v []float64
}

// sketchRank is the default rank of the subsample's sketch.
const sketchRank = 64

// sketchSeedPerturb is the second word of the sketch's PCG seed.
const sketchSeedPerturb = 0x2c5e7a93

// sketch is what the subsample's search leaves for the final solve: the
// subsample's problem (its rows in fold order) and its kernel, whose
// memory release gives back, and the sketch's rank.
type sketch struct {
	sub  *problem
	rp   *dual
	rank int
}

// release gives the sketch's kernel back (see dual.release); a nil sketch
// holds nothing.
func (s *sketch) release() {
	if s != nil && s.rp != nil {
		s.rp.release()
		s.rp = nil
	}
}

// pays reports whether the sketch costs at most a quarter of a step of the
// solve on all n1 rows of m parameters: its two products with the
// subsample's kernel, 4 ns^2 r flops, against a step's two Jacobian
// products, 4 n1 m. Over the baseline's Ritz pairs it saves a feature that
// matters a few steps and a null feature none, while each of its
// applications adds ns / n1 of a step: on the high-dimensional setting
// about a third of a step a reduction in all, which at (200, 100) on 6667
// rows, where the sketch is a quarter of a step, makes the two even. Where
// it does not pay (a narrow network, or few rows) the baseline solves
// without it and carries its Ritz pairs (solveScaled).
func (s *sketch) pays(n1, m int) bool {
	if s == nil || s.sub == nil {
		return false
	}
	ns := float64(s.sub.samples())
	r := math.Min(ns, float64(orDefault(s.rank, sketchRank)))
	return 4*ns*ns*r <= float64(n1)*float64(m)
}

// precond returns P^-1 for the penalty alpha of all n1 rows, or nil
// (nothing to precondition by) when the sketch holds no kernel or the
// kernel has no positive direction.
func (s *sketch) precond(ctx context.Context, alpha float64, n1 int) (*sketchPrecond, error) {
	if s == nil || s.rp == nil || s.rp.kmat == nil || s.sub.k != 1 {
		return nil, nil
	}
	k := s.rp.kfull
	ns := k.Rows
	km := mat.NewDense(ns, ns, k.Data[:ns*k.Stride])
	r := min(ns, orDefault(s.rank, sketchRank))
	rng := rand.New(rand.NewPCG(uint64(s.sub.seed), sketchSeedPerturb))
	omega := mat.NewDense(ns, r, nil)
	for i := range omega.RawMatrix().Data {
		omega.RawMatrix().Data[i] = rng.NormFloat64()
	}
	// The products with K are taken from the left, as Omega^T K and Q^T K:
	// K holds both triangles, equal, so they are (K Omega)^T and (K Q)^T
	// to the bit (each element the same fused multiply-adds in the same
	// order), and the product reads K's rows in place where K Omega would
	// first copy all of K into packed panels.
	var yt mat.Dense
	yt.Mul(omega.T(), km)
	q := orthonormal(yt.T())
	if q == nil {
		return nil, nil
	}
	// h is (Q^T K Q)^T, which the symmetrisation below takes as it is.
	var kqt, h mat.Dense
	kqt.Mul(q.T(), km)
	h.Mul(&kqt, q)
	_, c := q.Dims()
	hs := mat.NewSymDense(c, nil)
	for i := 0; i < c; i++ {
		for j := i; j < c; j++ {
			hs.SetSym(i, j, 0.5*(h.At(i, j)+h.At(j, i)))
		}
	}
	var es mat.EigenSym
	if !es.Factorize(hs, true) {
		return nil, nil
	}
	var w mat.Dense
	es.VectorsTo(&w)
	pre := &sketchPrecond{alpha: alpha, beta: alpha * float64(ns) / float64(n1), b: new(mat.Dense)}
	pre.b.Mul(q, &w)
	pre.theta = es.Values(nil)
	for i, t := range pre.theta {
		pre.theta[i] = math.Max(t, 0)
	}
	op, err := s.sub.jacobianOp(ctx)
	if err != nil {
		return nil, err
	}
	op.flops += 4 * float64(ns) * float64(ns) * float64(r)
	pre.op = op
	return pre, nil
}

// orthonormal returns an orthonormal basis of y's columns, ns x c (c at
// most y's columns: directions below rounding dropped), from the
// eigendecomposition of y^T y (twice, so that the basis is orthonormal to
// working precision); nil when y has no column to keep.
func orthonormal(y mat.Matrix) *mat.Dense {
	q := mat.DenseCopyOf(y)
	for pass := 0; pass < 2; pass++ {
		var g mat.SymDense
		g.SymOuterK(1, q.T())
		var es mat.EigenSym
		if !es.Factorize(&g, true) {
			return nil
		}
		vals := es.Values(nil)
		var v mat.Dense
		es.VectorsTo(&v)
		top := vals[len(vals)-1]
		var keep []int
		for i, d := range vals {
			if d > top*1e-12*float64(len(vals)) && d > 0 {
				keep = append(keep, i)
			}
		}
		if len(keep) == 0 {
			return nil
		}
		rows, _ := v.Dims()
		sel := mat.NewDense(rows, len(keep), nil)
		for j, i := range keep {
			for r := 0; r < rows; r++ {
				sel.Set(r, j, v.At(r, i)/math.Sqrt(vals[i]))
			}
		}
		var next mat.Dense
		next.Mul(q, sel)
		q = &next
	}
	return q
}

// apply writes P^-1 src into dst.
func (p *sketchPrecond) apply(dst, src []float64) error {
	u, err := p.op.mul(src, false)
	if err != nil {
		return fmt.Errorf("subsample preconditioner: %w", err)
	}
	ns, r := p.b.Dims()
	v := make([]float64, r)
	vv := mat.NewVecDense(r, v)
	vv.MulVec(p.b.T(), mat.NewVecDense(ns, u))
	y := make([]float64, r)
	for i, t := range p.theta {
		y[i] = v[i] / (t + p.beta)
	}
	var z mat.VecDense
	z.MulVec(p.b, mat.NewVecDense(r, y))
	t, err := p.op.mul(z.RawVector().Data, true)
	if err != nil {
		return fmt.Errorf("subsample preconditioner: %w", err)
	}
	for i, x := range src {
		dst[i] = (x - t[i]) / p.alpha
	}
	p.v = v
	return nil
}

// bound is an upper bound of r^T A^-1 r for the r apply was last given,
// by the subsample's rows without the scaling: they are some of all the
// rows, and B's columns are orthonormal, so that A = Phi^T Phi + alpha I
// >= L = alpha I + Z Z^T (Z Z^T = Phi_s^T B B^T Phi_s <= Phi_s^T Phi_s)
// and r^T A^-1 r <= r^T L^-1 r = (||r||^2 - sum_i v_i^2 / (theta_i +
// alpha)) / alpha with v = B^T Phi_s r, apply's: below ||r||^2 / alpha (A
// >= alpha I) by what the subsample's dominant directions hold of r, the
// directions of A's large eigenvalues, where that bound is loosest.
func (p *sketchPrecond) bound(r []float64) float64 {
	rr := floats.Dot(r, r)
	if p.v == nil {
		return rr / p.alpha
	}
	s := 0.0
	for i, t := range p.theta {
		s += p.v[i] * p.v[i] / (t + p.alpha)
	}
	return math.Max(0, rr-s) / p.alpha
}

// flops is the count of one application besides its products (the
// operator counts those): B's products and the update.
func (p *sketchPrecond) flops(m int) float64 {
	ns, r := p.b.Dims()
	return 4*float64(ns)*float64(r) + 2*float64(m)
}

// fits is false: the subsample is the feature's own, and its solve keeps
// going however far the first step leaves it (pcgSolve).
func (p *sketchPrecond) fits() bool { return false }

// productFlops is the products' flops counted so far, and the sketch's
// (counted with them).
func (p *sketchPrecond) productFlops() float64 { return p.op.flops }
