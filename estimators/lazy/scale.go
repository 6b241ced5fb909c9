package lazy

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/internal/timing"
)

// Lazy at scale: where the full-size dense cross-validation does not fit
// (the ridge system's side above maxRidgeDim, or its bytes above the
// memory bound) or, for a cross-validated penalty, would cost several
// times a subsample's (the side at least midScale times the subsample's),
// the penalty is chosen on a seeded subsample of the train rows by the
// same dense cross-validation and rescaled to the full rows (the penalty
// is unnormalised: alpha n1 / ns keeps alpha / n, the per-row penalty, the
// same) or, where several outputs cap the subsample too small, on a
// held-out share of all of them (heldout.go), and the update is fitted on
// all rows once, by the method the cost model (cost.go) chooses: the dense
// form when it fits and is cheaper, else a Krylov solve on products with
// the Jacobian (framework.JacobianMultiplier: for an MLP, two passes over
// its memoised signals per step, O(n x width) memory).

// energyTol is the tolerance of a matrix-free solve: the remaining
// decrease of the ridge objective (its Gauss-Radau bound) as a fraction of
// the decrease achieved (see solveMatrixFree). The train predictions'
// error is then at most sqrt(energyTol), a tenth, of the update's size.
// The held-out search's candidates are solved to it: their error moves
// the held-out error by far less than the candidates differ.
const energyTol = 1e-2

// finalEnergyTol is energyTol for the final solve, whose update the VI is
// computed from: the predictions' error at most sqrt(5e-3), about a
// fourteenth, of the update's size. It is tighter than the search's,
// which only ranks penalties, because a feature that matters has a large
// update and the VI is read from this solve; where the update is small
// its bound falls below either tolerance at the same step.
const finalEnergyTol = 5e-3

// subsampleSeedPerturb is the second word of the subsample's PCG seed.
const subsampleSeedPerturb = 0x5b5a3e11

// scaleStats are the Reduced.Stats keys of a run at scale: the rows the
// penalty was chosen on, the Krylov steps of the final solve and its
// counted flops, the method (0 dense, 1 matrix-free) and, for a solve
// preconditioned by the subsample's sketch or the baseline's Ritz pairs,
// its preconditioned steps (of krylov_steps; the rest unpreconditioned,
// where the preconditioner did not fit).
const (
	statSubsample = "cv_rows"
	statSteps     = "krylov_steps"
	statFlops     = "flops"
	statMethod    = "matrix_free"
	statPrecond   = "preconditioned"
)

// midScale is how many times the subsample's side a cross-validated
// problem's ridge system may have before lazy takes the scaled path
// although the dense cross-validation would fit: from twice the subsample
// (a system side of 2000 for one output) the subsample's search forms a
// fraction of the dense one's kernel and held-out predictions, and the
// final solve on all rows takes a few Krylov steps, while the VIs stay
// within a small fraction of their standard errors of the dense path's.
const midScale = 2

// scaled reports whether the problem of n1 train rows of k outputs each and
// m parameters takes the scaled path: its dense cross-validation at full
// size does not fit (a system side above maxRidgeDim, or its bytes above
// the memory bound), or the penalty is cross-validated and the system's
// side is at least midScale times the subsample's. A fixed penalty
// (Lambda) needs no search, and below the memory bound its problem keeps
// the dense path.
func (lz Estimator) scaled(n1, k, m int) bool {
	d := min(n1*k, m)
	if d > maxRidgeDim || 8*float64(d)*float64(d) > lz.memory() {
		return true
	}
	return lz.Lambda <= 0 && d >= midScale*lz.cfg.subsampleSize(n1, k)*k
}

func (lz Estimator) memory() float64 {
	if lz.Memory > 0 {
		return float64(lz.Memory)
	}
	return DefaultMemory
}

// reduceScaled is the reduction of a problem where scaled is true, its
// rows in their order; xev is the dropped evaluation split. base, when not
// nil, returns the baseline, whose penalty is where the search starts (the
// top of the grid when it is +Inf, no update: nearStart); it may be called
// more than once (BaselineReducer's base returns the same Reduced each
// time).
//
// Each solve whose penalty was chosen on a subsample is preconditioned by
// that subsample where its sketch costs at most a quarter of a step (sketch.go).
// Otherwise the baseline (carry) hands the Ritz pairs of its matrix-free
// solve's basis to the features in its Carry, and a feature whose penalty
// is at least precondWhen (half) of the baseline's solves preconditioned
// by them (precond.go).
func (p *problem) reduceScaled(ctx context.Context, xev mat.Matrix, base func() (framework.Reduced, error), carry bool) (framework.Reduced, error) {
	alpha, start, sk, err := p.scaledAlpha(ctx, base)
	defer sk.release()
	if err != nil {
		return framework.Reduced{}, err
	}
	p.stats[statLambda] = alpha
	if math.IsInf(alpha, 1) {
		return p.predictFull(ctx, xev)
	}
	shift, carried, err := p.solveScaled(ctx, alpha, start, sk, base, carry)
	if err != nil {
		return framework.Reduced{}, err
	}
	red, err := p.predictReduced(ctx, &shift, xev)
	red.Carry = carried
	return red, err
}

// scaledAlpha is the penalty at scale: the fixed one, else the one chosen
// on held-out rows (heldOutAlpha, with its update of the fitted rows, the
// final solve's start) or on a subsample (subsampleSearch, with its
// sketch, which the caller releases), starting from the baseline's when
// base is not nil.
func (p *problem) scaledAlpha(ctx context.Context, base func() (framework.Reduced, error)) (alpha float64, start []float64, sk *sketch, err error) {
	if alpha = p.est.Lambda; alpha > 0 {
		return alpha, nil, nil, nil
	}
	n1 := p.samples()
	_, multiplier := framework.As[framework.JacobianMultiplier](p.g)
	if p.est.cfg.heldOut(n1, p.k) && (multiplier || 8*float64(n1*p.k)*float64(p.g.NumParams()) <= p.est.memory()) {
		near, err := baselinePenalty(base) // +Inf: the baseline chose no update
		if err != nil {
			return 0, nil, nil, err
		}
		var steps int
		var flops float64
		stop := timing.From(ctx).Start(stageSearch)
		if alpha, start, steps, flops, err = p.heldOutAlpha(ctx, near); err != nil {
			return 0, nil, nil, err
		}
		stop(flops)
		p.stats[statSteps], p.stats[statFlops] = float64(steps), flops
		return alpha, start, nil, nil
	}
	alpha, sk, err = p.subsampleSearch(ctx, base)
	return alpha, nil, sk, err
}

// solveScaled fits the update on all the rows at the penalty alpha, by the
// method chooseMethod picks: dense, or matrix-free from start (nil: 0),
// preconditioned by the subsample's sketch (sk) where there is one, else
// by the baseline's Ritz pairs where they serve (base), and returns it
// with, for the baseline itself (carry) solved without the sketch, the
// Ritz pairs its features start from.
func (p *problem) solveScaled(ctx context.Context, alpha float64, start []float64, sk *sketch, base func() (framework.Reduced, error), carry bool) (shift framework.Shift, carried []float64, err error) {
	g, stats := p.g, p.stats
	n, m := len(p.e), g.NumParams()
	_, kernel := framework.As[framework.Kerneler](g)
	_, multiplier := framework.As[framework.JacobianMultiplier](g)
	if chooseMethod(n, p.k, m, kernel, multiplier, p.est.memory()) == methodDense {
		rp, err := p.newRidge(ctx, nil, false)
		if err != nil {
			return shift, nil, err
		}
		defer releaseRidge(rp)
		stop := timing.From(ctx).Start(stageSolve)
		if shift, err = rp.solveAll(ctx, alpha); err != nil {
			return shift, nil, err
		}
		stop(0) // the solve's own flops: shiftedSolve's
		stats[statMethod] = 0
		return shift, nil, nil
	}
	stop := timing.From(ctx).Start(stageSolve)
	pre, err := p.precondFor(ctx, alpha, start, sk, base)
	if err != nil {
		return shift, nil, err
	}
	var dtheta []float64
	var steps int
	var flops float64
	if pre != nil {
		var pcgSteps int
		dtheta, steps, pcgSteps, flops, err = p.precondSolve(ctx, alpha, p.est.cfg.energyTol(), pre)
		stats[statPrecond] = float64(pcgSteps)
	} else {
		var kr *krylov
		dtheta, steps, flops, kr, err = p.solveMatrixFree(ctx, alpha, p.est.cfg.energyTol(), start)
		if err == nil && carry && start == nil {
			carried = ritzCarry(kr, m, p.est.cfg.carryValues())
		}
	}
	if err != nil {
		return shift, nil, err
	}
	stop(flops)
	shift.DTheta = dtheta
	stats[statMethod] = 1
	stats[statSteps] += float64(steps)
	stats[statFlops] += flops
	return shift, carried, nil
}

// precondFor is the final solve's preconditioner: for a solve from 0, the
// subsample's sketch where the search left one (sk) and it pays
// (sketch.pays), else the baseline's Ritz pairs where its penalty is near
// enough (config.precondWhen); nil: none.
func (p *problem) precondFor(ctx context.Context, alpha float64, start []float64, sk *sketch, base func() (framework.Reduced, error)) (preconditioner, error) {
	if start != nil {
		return nil, nil
	}
	if sk != nil && !p.est.cfg.noSketch && sk.pays(p.samples(), p.g.NumParams()) {
		pre, err := sk.precond(ctx, alpha, p.samples())
		if err != nil {
			return nil, err
		}
		if pre != nil {
			return pre, nil
		}
	}
	if base == nil {
		return nil, nil
	}
	b, err := base()
	if err != nil {
		return nil, err
	}
	if l := b.Stats[statLambda]; l > 0 && alpha >= p.est.cfg.precondRatio()*l {
		if pre := newRitzPrecond(b.Carry, p.g.NumParams(), alpha); pre != nil {
			return pre, nil
		}
	}
	return nil, nil
}

// subsampleAlpha chooses the penalty by the dense cross-validation on a
// seeded subsample of p's rows (the same rows for every feature) and
// rescales it to all of them; stats gains statSubsample, the subsample's
// rows.
//
// With base (the baseline, whose penalty is one for all the rows) the
// search starts from its penalty rescaled to the subsample (searchNear;
// +Inf, no update, stays +Inf: the top of the grid, nearStart). The
// subsample's kernel comes first, so that a feature that runs beside its
// baseline waits for it only once its own kernel is formed.
//
// Unless DoublePrecision, the cross-validation runs on the model's
// single-precision kernel and its folds' Phi_T^T a in single precision
// when it has them (framework.SingleKerneler; newRidge): faster kernels,
// and the folds' signals not computed again.
func (p *problem) subsampleAlpha(ctx context.Context, base func() (framework.Reduced, error)) (float64, error) {
	alpha, sk, err := p.subsampleSearch(ctx, base)
	sk.release()
	return alpha, err
}

// subsampleSearch is subsampleAlpha, and the sketch of the subsample's
// rows and kernel that preconditions the final solve (nil where the
// subsample's ridge problem is not the kernel's); the caller releases it.
func (p *problem) subsampleSearch(ctx context.Context, base func() (framework.Reduced, error)) (float64, *sketch, error) {
	n1 := p.samples()
	ns := p.est.cfg.subsampleSize(n1, p.k)
	rows := rand.New(rand.NewPCG(uint64(p.seed), subsampleSeedPerturb)).Perm(n1)[:ns]
	slices.Sort(rows)
	var order, bounds []int
	for _, fold := range foldsOf(ns, p.est.folds(), p.seed) {
		bounds = append(bounds, len(order))
		for _, i := range fold {
			order = append(order, rows[i])
		}
	}
	bounds = append(bounds, ns)
	sub := p.subset(order)
	rp, err := sub.newRidge(ctx, bounds, p.single())
	if err != nil {
		return 0, nil, err
	}
	sk := &sketch{sub: sub}
	if d, ok := rp.(*dual); ok {
		sk.rp = d
	} else {
		defer releaseRidge(rp)
	}
	near, err := baselinePenalty(base) // +Inf: the baseline chose no update
	if err == nil {
		var alpha float64
		if alpha, err = sub.chooseAlpha(ctx, rp, bounds, p.est.cfg.tol(), near*(float64(ns)/float64(n1))); err == nil {
			p.stats[statSubsample] = float64(ns)
			// By the ratio, exactly 1 when the subsample is all the rows, so
			// that the penalty is then the dense path's (alpha n1 / ns
			// rounds some alphas by an ulp).
			return alpha * (float64(n1) / float64(ns)), sk, nil
		}
	}
	sk.release()
	return 0, nil, err
}

// jacobianOp is the primal normal operator Phi^T Phi of the Jacobian Phi
// of the rows x (vectors of the parameters), by the model's
// JacobianMultiplier (its single-precision form when asked for and the
// model has one), else by the Jacobian formed once. It counts the flops of
// its products (productFlops).
type jacobianOp struct {
	ctx   context.Context
	jm    framework.JacobianMultiplier
	x     mat.Matrix
	n, m  int
	flops float64
}

func (o *jacobianOp) dim() int { return o.m }

func (o *jacobianOp) mul(v []float64, trans bool) ([]float64, error) {
	var out *mat.Dense
	var err error
	col := mat.NewDense(len(v), 1, v)
	if trans {
		out, err = o.jm.JacobianTMul(o.ctx, o.x, col)
	} else {
		out, err = o.jm.JacobianMul(o.ctx, o.x, col)
	}
	if err != nil {
		return nil, err
	}
	want := o.n
	if trans {
		want = o.m
	}
	if r, c := out.Dims(); r != want || c != 1 {
		return nil, fmt.Errorf("jacobian product: backend returned %d x %d, want %d x 1", r, c, want)
	}
	k := 1 // rows per sample
	if samples, _ := o.x.Dims(); samples > 0 {
		k = o.n / samples
	}
	_, formed := o.jm.(jacobianOnly)
	o.flops += productFlops(o.n, k, o.m, !formed)
	return out.RawMatrix().Data, nil
}

func (o *jacobianOp) mulVec(dst, x []float64) error {
	t, err := o.mul(x, false)
	if err == nil {
		t, err = o.mul(t, true)
	}
	if err != nil {
		return err
	}
	copy(dst, t)
	return nil
}

// jacobianOnly serves JacobianMultiplier from a Jacobian held in memory:
// the matrix-free solver's fallback for models without one.
type jacobianOnly struct{ j *mat.Dense }

func (h jacobianOnly) JacobianMul(_ context.Context, _ mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	var out mat.Dense
	out.Mul(h.j, v)
	return &out, nil
}

func (h jacobianOnly) JacobianTMul(_ context.Context, _ mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	var out mat.Dense
	out.Mul(h.j.T(), u)
	return &out, nil
}

// solveMatrixFree returns dtheta = argmin J(w) = ||e - Phi w||^2 +
// alpha ||w||^2 for the Jacobian Phi of p's rows, by Lanczos (CG) on the
// primal normal operator Phi^T Phi + alpha I, one product with Phi and one
// with Phi^T per step, with its steps, counted flops and Krylov basis (the
// baseline's Ritz pairs come from it). The iterates w0 + d_k (w0 nil: 0)
// minimise J over the Krylov space of the residual Phi^T (e - Phi w0) -
// alpha w0, and the solve stops when the Gauss-Radau bound on the
// remaining decrease J(w_k) - J(w*) is at most tau (J(0) - J(w_k))
// (solveEnergyFrom; J(0) - J(w0) counts in the decrease achieved, so the
// guarantee holds whatever w0). Since J(w_k) - J(w*) = ||Phi (w_k -
// w*)||^2 + alpha ||w_k - w*||^2, the train predictions' error is then at
// most sqrt(tau) of the size of the decrease, about the update's. A start
// costs a product with Phi more than a start from 0; the held-out search's
// solution at the chosen penalty, on four fifths of the same rows, is
// close to the solution sought and saves more steps than that. The
// products are
// the model's single-precision ones unless DoublePrecision (jacobianOp).
func (p *problem) solveMatrixFree(ctx context.Context, alpha, tau float64, w0 []float64) ([]float64, int, float64, *krylov, error) {
	op, err := p.jacobianOp(ctx)
	if err != nil {
		return nil, 0, 0, nil, err
	}
	rhs, before, err := op.residual(p.e, alpha, w0)
	if err != nil {
		return nil, 0, 0, nil, fmt.Errorf("jacobian product: %w", err)
	}
	kr := newKrylov(op, rhs)
	m := p.g.NumParams()
	sol, ok, err := kr.solveEnergyFrom(ctx, alpha, tau, before, maxBasisSteps(m, p.est.memory()))
	if err != nil {
		return nil, 0, 0, nil, err
	}
	if !ok {
		return nil, 0, 0, nil, notConverged(alpha, kr.steps())
	}
	if w0 != nil {
		floats.Add(sol, w0)
	}
	return sol, kr.steps(), krylovFlops(kr, op), kr, nil
}

// notConverged is the error of a matrix-free solve at alpha that did not
// meet its rule within its basis's steps.
func notConverged(alpha float64, steps int) error {
	return fmt.Errorf("%w: the matrix-free solve at alpha %g did not converge in %d steps (raise the memory bound or fix a larger penalty)", errSingular, alpha, steps)
}

// precondSolve is solveMatrixFree preconditioned by pre (the subsample's
// sketch, or a baseline's Ritz pairs: pcgSolve), from 0, with its
// preconditioned steps. A solve that stops without meeting the rule (the
// pairs do not fit, or
// precondMaxSteps passed) starts again unpreconditioned from 0, the plain
// solve (its right-hand side kept), which takes fewer steps than a plain
// solve from the preconditioned iterate; the steps and flops are both
// solves'.
func (p *problem) precondSolve(ctx context.Context, alpha, tau float64, pre preconditioner) ([]float64, int, int, float64, error) {
	op, err := p.jacobianOp(ctx)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	rhs, err := op.mul(p.e, true)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("jacobian product: %w", err)
	}
	m := p.g.NumParams()
	mem := p.est.memory()
	res, err := pcgSolve(ctx, op, rhs, alpha, tau, pre, min(precondMaxSteps, maxBasisSteps(m, mem)))
	if err != nil {
		return nil, 0, 0, 0, err
	}
	res.flops += pre.productFlops()
	if res.done {
		return res.w, res.steps, res.steps, op.flops + res.flops, nil
	}
	kr := newKrylov(op, rhs)
	sol, ok, err := kr.solveEnergy(ctx, alpha, tau, maxBasisSteps(m, mem))
	if err != nil {
		return nil, 0, 0, 0, err
	}
	if !ok {
		return nil, 0, 0, 0, notConverged(alpha, kr.steps())
	}
	return sol, res.steps + kr.steps(), res.steps, krylovFlops(kr, op) + res.flops, nil
}

// residual returns the right-hand side of the normal equations for a
// start at w0, Phi^T (e - Phi w0) - alpha w0 (Phi^T e for w0 nil), and the
// decrease J(0) - J(w0) = ||e||^2 - ||e - Phi w0||^2 - alpha ||w0||^2.
func (o *jacobianOp) residual(e []float64, alpha float64, w0 []float64) ([]float64, float64, error) {
	if w0 == nil {
		rhs, err := o.mul(e, true)
		return rhs, 0, err
	}
	u, err := o.mul(w0, false)
	if err != nil {
		return nil, 0, err
	}
	res := make([]float64, len(e))
	floats.SubTo(res, e, u)
	before := floats.Dot(e, e) - floats.Dot(res, res) - alpha*floats.Dot(w0, w0)
	rhs, err := o.mul(res, true)
	if err != nil {
		return nil, 0, err
	}
	floats.AddScaled(rhs, -alpha, w0)
	return rhs, before, nil
}

// krylov returns the Krylov solver of the primal ridge normal equations
// (Phi^T Phi + alpha I) w = Phi^T e of p's rows, for any alpha, on the
// products of jacobianOp, and that operator, which counts their flops.
func (p *problem) krylov(ctx context.Context) (*krylov, *jacobianOp, error) {
	op, err := p.jacobianOp(ctx)
	if err != nil {
		return nil, nil, err
	}
	rhs, err := op.mul(p.e, true)
	if err != nil {
		return nil, nil, fmt.Errorf("jacobian product: %w", err)
	}
	return newKrylov(op, rhs), op, nil
}

// jacobianOp is the operator of the Jacobian rows of p's rows, on the
// model's JacobianMultiplier, else on its Jacobian formed once. Unless
// DoublePrecision, and where the model has them
// (framework.SinglePrecisioner), the products are its single-precision
// ones: their rounding, relative ~1e-7 of each term, is five orders below
// what the solves' rule (energyTol) asks for, so that the solves take the
// same steps (BenchmarkScalePrecisionRun).
func (p *problem) jacobianOp(ctx context.Context) (*jacobianOp, error) {
	g, x, n := p.g, p.x, len(p.e)
	m := g.NumParams()
	jm, ok := jacobian.MultiplierOf(g, p.single())
	if !ok {
		j, err := g.Jacobian(ctx, x)
		if err != nil {
			return nil, fmt.Errorf("jacobian: %w", err)
		}
		if r, c := j.Dims(); r != n || c != m {
			return nil, fmt.Errorf("jacobian: backend returned %d x %d for %d rows and %d parameters", r, c, n, m)
		}
		jm = jacobianOnly{j}
	}
	return &jacobianOp{ctx: ctx, jm: jm, x: x, n: n, m: m}, nil
}

// krylovFlops is the counted flops of a matrix-free solve: the operator's
// products and the basis's orthogonalisation, 4 k^2 m for k steps.
func krylovFlops(kr *krylov, op *jacobianOp) float64 {
	return op.flops + 4*float64(kr.steps())*float64(kr.steps())*float64(op.m)
}

// scaleFields are the Summarize fields of a run at scale (none at the
// dense sizes): the rows the penalty was chosen on, the Krylov steps of
// the final solves and, where the penalty is chosen at full size, of its
// search (summed over the reductions), their counted flops and, where
// a solve was preconditioned (the subsample's sketch, the baseline's Ritz
// pairs), its preconditioned steps (of krylov_steps, summed likewise).
func scaleFields(stats []map[string]float64) []framework.Field {
	var out []framework.Field
	for _, key := range []string{statSubsample, statSteps, statFlops, statPrecond} {
		sum, seen := 0.0, false
		for _, s := range stats {
			if v, ok := s[key]; ok {
				sum, seen = sum+v, true
			}
			if key == statSubsample && seen {
				break // the same for every reduction
			}
		}
		if seen {
			out = append(out, framework.Field{Key: key, Value: sum})
		}
	}
	return out
}
