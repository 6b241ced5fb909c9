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
)

// Estimator at scale: where the full-size dense cross-validation does not fit
// (the ridge system's side above maxRidgeDim, or its bytes above the
// memory bound) or, for a cross-validated penalty, would cost several
// times a subsample's (the side at least midScale times the subsample's),
// the penalty is chosen on a seeded subsample of the train rows by the
// same dense cross-validation and rescaled to the full rows (the penalty
// is unnormalised: alpha n1 / ns keeps alpha / n, the per-row penalty, the
// same) or, where several outputs cap the subsample too small, on a
// held-out share of all of them (lazy_heldout.go), and the update is
// fitted on all rows once, by the method the cost model (lazy_cost.go)
// chooses: the dense form when it fits and is cheaper, else a Krylov solve
// on products with the Jacobian (framework.JacobianMultiplier: for an
// MLP, two passes over its memoised signals per step, O(n x width)
// memory).

// subsampleRows is the number of train rows the penalty is chosen on at
// scale. Measured on vi bench highdim (p 100, width 200:100) and linear
// (width 200:100): see docs/performance.md; 500 rows or 2 folds moved the
// VI of null features by 1-1.9 standard errors.
var subsampleRows = 1000

// subsampleSearchTol is the search's tolerance on the subsample, in decades
// of the penalty: coarser than the dense path's searchTol (0.05), since the
// subsample's own penalty varies by more (0.1 decades from 1000 rows to
// 2000, up to 0.4 to 500) and the CV error is flat near its minimum:
// measured on x1..x8 of vi bench highdim n 10000 (200, 100), the search
// took 25% less time and the VI moved by at most 0.22 of its standard
// error (BenchmarkScaleSearchVariants, docs/performance.md).
// subsampleRows and subsampleSearchTol are variables for that study only.
var subsampleSearchTol = 0.15

// energyTol is the tolerance of the matrix-free solve: the remaining
// decrease of the ridge objective (its Gauss-Radau bound) as a fraction of
// the decrease achieved (see matrixFreeSolve). The train predictions' error
// is then at most sqrt(energyTol), a tenth, of the update's size, and the
// evaluation VI moved by at most 0.08 of its standard error against the
// exact solve on vi bench highdim's features x1..x4 at n 3000 and x1 at n
// 10000, (200, 100), with 2-5 steps where a backward error of 1e-6 took
// 8-10 (BenchmarkScaleTolerance; docs/performance.md).
const energyTol = 1e-2

// subsampleSeedPerturb is the second word of the subsample's PCG seed.
const subsampleSeedPerturb = 0x5b5a3e11

// scaleStats are the Reduced.Stats keys of a run at scale: the rows the
// penalty was chosen on, the Krylov steps of the final solve and its
// counted flops, the method (0 dense, 1 matrix-free) and, for a solve
// preconditioned by the baseline's Ritz pairs, its preconditioned steps
// (of krylov_steps; the rest unpreconditioned, where the pairs did not
// fit).
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
// (a system side of 2000 for one output) the subsample's search costs a
// quarter of the dense one's kernel and half of its held-out predictions,
// and the final solve on all rows a few Krylov steps. Measured
// (docs/performance.md, "Stop 27: mid sizes"): on vi bench highdim n 3000
// lazy 3.8x faster at width 50 and 1.8x at (200, 100); on friedman1 and
// linear (n 4500) and interaction (n 3600), three seeds each, with a (200,
// 100) network, which nobody had tuned on, the VIs moved by 0.056 of their
// standard errors on average and at most 0.44, and their mean error
// against the truths was the dense path's (0.1445 against 0.1450).
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
	return lz.Lambda <= 0 && d >= midScale*subsampleSize(n1, k)*k
}

func (lz Estimator) memory() float64 {
	if lz.Memory > 0 {
		return float64(lz.Memory)
	}
	return DefaultMemory
}

// reduceScaled is Reduce for a problem where scaled is true. x holds the
// dropped train rows in their order, targets and e their k outputs each;
// base, when not nil, returns the baseline, whose penalty is where the
// search starts (the top of the grid when it is +Inf, no update: nearStart);
// it may be called more than once (BaselineReducer's base returns the same
// Reduced each time).
//
// The baseline (carry) hands the Ritz pairs of its matrix-free solve's
// basis to the features in its Carry; a feature whose penalty is at least
// precondWhen (half) of the baseline's solves preconditioned by them
// (lazy_precond.go).
func (lz Estimator) reduceScaled(ctx context.Context, g framework.Gradienter, p *framework.Problem, f framework.Feature, x *mat.Dense, targets, e []float64, k int, base func() (framework.Reduced, error), carry bool) (framework.Reduced, error) {
	n1, _ := x.Dims()
	stats := map[string]float64{}
	_, multiplier := framework.AsJacobianMultiplier(g)
	alpha := lz.Lambda
	var start []float64 // the held-out search's update: the final solve's start
	if alpha <= 0 {
		near := 0.0
		if base != nil {
			b, err := base()
			if err != nil {
				return framework.Reduced{}, err
			}
			if l := b.Stats[statLambda]; l > 0 {
				near = l // +Inf: the baseline chose no update
			}
		}
		var err error
		if heldOut(n1, k) && (multiplier || 8*float64(n1*k)*float64(g.NumParams()) <= lz.memory()) {
			var steps int
			var flops float64
			if alpha, start, steps, flops, err = lz.heldOutAlpha(ctx, g, x, targets, e, k, p.Seed, near, stats); err != nil {
				return framework.Reduced{}, err
			}
			stats[statSteps], stats[statFlops] = float64(steps), flops
		} else if alpha, err = lz.subsampleAlpha(ctx, g, x, targets, e, k, p.Seed, stats, near); err != nil {
			return framework.Reduced{}, err
		}
	}
	stats[statLambda] = alpha
	xev := p.Drop(p.XEval, f)
	if math.IsInf(alpha, 1) {
		pred, err := g.Predict(ctx, xev)
		if err != nil {
			return framework.Reduced{}, fmt.Errorf("predict evaluation split: %w", err)
		}
		return framework.Reduced{Pred: pred, Stats: stats}, nil
	}
	n, m := n1*k, g.NumParams()
	_, kernel := framework.AsKerneler(g)
	var shift framework.Shift
	var carried []float64 // the baseline's Ritz pairs
	switch chooseMethod(n, k, m, kernel, multiplier, lz.memory()) {
	case methodDense:
		rp, err := newRidge(ctx, g, x, e, k, nil)
		if err != nil {
			return framework.Reduced{}, err
		}
		if shift, err = rp.solveAll(ctx, alpha); err != nil {
			return framework.Reduced{}, err
		}
		stats[statMethod] = 0
	default:
		var pre *ritzPrecond
		if start == nil && base != nil {
			b, err := base()
			if err != nil {
				return framework.Reduced{}, err
			}
			if l := b.Stats[statLambda]; l > 0 && alpha >= precondWhen*l {
				pre = newRitzPrecond(b.Carry, m, alpha)
			}
		}
		var dtheta []float64
		var steps int
		var flops float64
		var err error
		if pre != nil {
			var pcgSteps int
			dtheta, steps, pcgSteps, flops, err = precondSolve(ctx, g, x, e, alpha, energyTol, lz.memory(), pre, !lz.DoublePrecision)
			stats[statPrecond] = float64(pcgSteps)
		} else {
			var kr *krylov
			dtheta, steps, flops, kr, err = matrixFreeSolveKrylov(ctx, g, x, e, alpha, energyTol, lz.memory(), start, !lz.DoublePrecision)
			if err == nil && carry && start == nil {
				carried = ritzCarry(kr, m)
			}
		}
		if err != nil {
			return framework.Reduced{}, err
		}
		shift.DTheta = dtheta
		stats[statMethod] = 1
		stats[statSteps] += float64(steps)
		stats[statFlops] += flops
	}
	red, err := predictReduced(ctx, g, &shift, xev, stats)
	red.Carry = carried
	return red, err
}

// subsampleSize is the number of rows of the subsample for n1 train rows
// with k outputs each: the dense cross-validation's kernel has ns k rows.
func subsampleSize(n1, k int) int { return min(n1, subsampleRows, maxRidgeDim/k) }

// subsampleAlpha chooses the penalty by the dense cross-validation on a
// seeded subsample of the rows of x (the same rows for every feature) and
// rescales it to all of them.
//
// With near > 0 (a penalty for all the rows of x, the baseline's) the
// search starts from it rescaled to the subsample (searchNear; +Inf, no
// update, stays +Inf: the top of the grid, nearStart).
//
// Unless DoublePrecision, the cross-validation runs on the model's
// single-precision kernel and its folds' Phi_T^T a in single precision
// when it has them (framework.SingleKerneler; newRidgeOf): for the MLP on
// highdim n 10000 (200, 100), the kernel's Grams 1.4-2x as fast and the
// folds' signals not computed again (docs/performance.md, Stop 27).
func (lz Estimator) subsampleAlpha(ctx context.Context, g framework.Gradienter, x *mat.Dense, targets, e []float64, k int, seed int64, stats map[string]float64, near float64) (float64, error) {
	n1, _ := x.Dims()
	ns := subsampleSize(n1, k)
	rows := rand.New(rand.NewPCG(uint64(seed), subsampleSeedPerturb)).Perm(n1)[:ns]
	slices.Sort(rows)
	var order, bounds []int
	for _, fold := range foldsOf(ns, lz.folds(), seed) {
		bounds = append(bounds, len(order))
		for _, i := range fold {
			order = append(order, rows[i])
		}
	}
	bounds = append(bounds, ns)
	xs, ts, es := rowsOf(x, order), stackRows(targets, order, k), stackRows(e, order, k)
	rp, err := newRidgeOf(ctx, g, xs, es, k, bounds, !lz.DoublePrecision)
	if err != nil {
		return 0, err
	}
	alpha, err := chooseAlpha(ctx, g, rp, ts, es, bounds, k, subsampleSearchTol, near*(float64(ns)/float64(n1)))
	if err != nil {
		return 0, err
	}
	stats[statSubsample] = float64(ns)
	// By the ratio, exactly 1 when the subsample is all the rows, so that
	// the penalty is then the dense path's (alpha n1 / ns rounds some
	// alphas by an ulp).
	return alpha * (float64(n1) / float64(ns)), nil
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

// matrixFreeSolve returns dtheta = argmin J(w) = ||e - Phi w||^2 +
// alpha ||w||^2 for the Jacobian Phi of the rows x, by Lanczos (CG) on the
// primal normal operator Phi^T Phi + alpha I from 0, one product with Phi
// and one with Phi^T per step, with its steps and counted flops. The
// iterates w_k minimise J over the Krylov space, and the solve stops when
// the Gauss-Radau bound on the remaining decrease J(w_k) - J(w*) is at most
// tau (J(0) - J(w_k)) (solveEnergy). Since J(w_k) - J(w*) = ||Phi (w_k -
// w*)||^2 + alpha ||w_k - w*||^2, the train predictions' error is then at
// most sqrt(tau) of the size of the decrease, about the update's. Its
// products are the model's double-precision ones.
func matrixFreeSolve(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, alpha, tau, mem float64) ([]float64, int, float64, error) {
	return matrixFreeSolveFrom(ctx, g, x, e, alpha, tau, mem, nil)
}

// matrixFreeSolveFrom is matrixFreeSolve from a start w0 (nil: 0): the
// iterates are w0 + d_k, d_k CG's on the residual Phi^T (e - Phi w0) -
// alpha w0, and the rule is the same, measured from 0: J(0) - J(w0) is
// counted in the decrease achieved (solveEnergyFrom), so the result has
// the same guarantee whatever w0. The start costs a product with Phi more
// than a start from 0, which needs only Phi^T e. The held-out search's
// solution at the chosen penalty, on four fifths of the same rows, is a
// start that pays: on digits.csv with the CNN (seed 7, pixels px_4_0 ..
// px_4_5) the final solves took 8-13 steps instead of 12-16.
func matrixFreeSolveFrom(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, alpha, tau, mem float64, w0 []float64) ([]float64, int, float64, error) {
	sol, steps, flops, _, err := matrixFreeSolveKrylov(ctx, g, x, e, alpha, tau, mem, w0, false)
	return sol, steps, flops, err
}

// matrixFreeSolveKrylov is matrixFreeSolveFrom, on the model's
// single-precision products when single and it has them (newJacobianOp),
// also returning the Krylov basis (the baseline's Ritz pairs come from
// it).
func matrixFreeSolveKrylov(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, alpha, tau, mem float64, w0 []float64, single bool) ([]float64, int, float64, *krylov, error) {
	op, err := newJacobianOp(ctx, g, x, len(e), single)
	if err != nil {
		return nil, 0, 0, nil, err
	}
	rhs, before, err := op.residual(e, alpha, w0)
	if err != nil {
		return nil, 0, 0, nil, fmt.Errorf("jacobian product: %w", err)
	}
	kr := newKrylov(op, rhs)
	m := g.NumParams()
	sol, ok, err := kr.solveEnergyFrom(ctx, alpha, tau, before, maxBasisSteps(m, mem))
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

// precondSolve is matrixFreeSolve preconditioned by a baseline's Ritz
// pairs (pcgSolve), from 0, with its preconditioned steps. A solve that
// stops without meeting the rule (the pairs do not fit, or
// precondMaxSteps passed) starts again unpreconditioned from 0, the plain
// solve (its right-hand side kept); the steps and flops are both solves'.
// From the preconditioned iterate instead (the plain solve of its
// residual, no product more) took more steps: on vi bench linear n 20000
// x2, 1 + 4 against 1 + 3 from 0.
func precondSolve(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, alpha, tau, mem float64, pre *ritzPrecond, single bool) ([]float64, int, int, float64, error) {
	op, err := newJacobianOp(ctx, g, x, len(e), single)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	rhs, err := op.mul(e, true)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("jacobian product: %w", err)
	}
	m := g.NumParams()
	res, err := pcgSolve(ctx, op, rhs, alpha, tau, pre, min(precondMaxSteps, maxBasisSteps(m, mem)))
	if err != nil {
		return nil, 0, 0, 0, err
	}
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

// matrixFreeKrylov returns the Krylov solver of the primal ridge normal
// equations (Phi^T Phi + alpha I) w = Phi^T e of the rows x, for any
// alpha, on the products of the model's JacobianMultiplier (else of its
// Jacobian, formed once; single as for newJacobianOp), and the operator
// that counts their flops.
func matrixFreeKrylov(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, single bool) (*krylov, *jacobianOp, error) {
	op, err := newJacobianOp(ctx, g, x, len(e), single)
	if err != nil {
		return nil, nil, err
	}
	rhs, err := op.mul(e, true)
	if err != nil {
		return nil, nil, fmt.Errorf("jacobian product: %w", err)
	}
	return newKrylov(op, rhs), op, nil
}

// newJacobianOp is the operator of the n Jacobian rows of x, on the
// model's JacobianMultiplier, else on its Jacobian formed once. With
// single, and a model that has them (framework.SinglePrecisioner), the
// products are its single-precision ones: their rounding, relative ~1e-7
// of each term, is five orders below what the solves' rule (energyTol)
// asks for; on highdim n 10000 x1..x16 and linear n 20000 x1..x6 they
// took the same steps and moved the VIs by at most 4.4e-5 of their
// standard errors (BenchmarkScalePrecisionRun; docs/performance.md, Stop
// 26).
func newJacobianOp(ctx context.Context, g framework.Gradienter, x *mat.Dense, n int, single bool) (*jacobianOp, error) {
	m := g.NumParams()
	jm, ok := framework.MultiplierOf(g, single)
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
// a solve was preconditioned by the baseline's Ritz pairs, its
// preconditioned steps (of krylov_steps, summed likewise).
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
