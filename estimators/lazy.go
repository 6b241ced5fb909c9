package estimators

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/linalg"
)

// Lazy is LazyVI (Algorithm 1 of Gao, Stevens, Willett, Raskutti). At the
// full model's parameters theta_f it takes the residuals e = y - h(X^(j)) of
// the full network on the dropped train split and the gradient features
// Phi = d h(X^(j)) / d theta, solves the ridge regression
//
//	dtheta = argmin_w ||e - Phi w||^2 + alpha ||w||^2
//
// and reports the network itself at theta_f + dtheta on the dropped
// evaluation split. The penalty is unnormalised (sklearn's Ridge(alpha)
// scale); the output bias is a parameter, so no separate intercept is fitted.
//
// With K classes (Task Multiclass) the K-dimensional residual
// onehot(y) - p(x^(j)) is regressed, jointly over the outputs, on the
// per-output gradient features: samples contribute K stacked rows (row
// i*K + k: e_ik and d p_k(x_i^(j)) / d theta, the Gradienter's multiclass
// Jacobian), one shift of the shared parameters serves all classes, and the
// network's softmax keeps the reduced predictions probabilities. This is the
// squared-error (Brier) linearisation, as the binary case regresses
// y - P(Y = 1); the K rows of a sample are not weighted by the softmax
// covariance. Folds keep a sample's rows together.
//
// Dual or primal, whichever side is smaller: with n1 <= M it works with the
// NTK Gram K = Phi Phi^T (from the backend's Kerneler when it has one,
// without the Jacobian) and dtheta = Phi^T (K + alpha I)^-1 e; with M < n1 it
// forms G = Phi^T Phi and Phi^T e once, by fold blocks (framework.GramOf:
// the backend's Gram, or its Jacobian's), and solves
// (G + alpha I) dtheta = Phi^T e. Predictions at shifted parameters go to
// the backend in batches (framework.PredictShifts), in the dual form
// theta_f + Phi^T a when it has kernels, so that behind the plugin
// transport neither the Jacobian nor the M-vectors cross.
//
// alpha is chosen per feature by K-fold cross-validation on the train split
// (folds seeded from the run's seed, the same for every feature): each
// candidate is scored by the squared error of h_{theta_f + dtheta_k} on the
// held-out fold k, dtheta_k fitted on the other folds from one Lanczos
// basis per fold that serves every candidate (see krylov; it grows only as
// far as the penalties asked for need, a few dozen steps for the useful
// ones, instead of a factorization of the fold's system). The rows are put
// in fold order first, so that each fold is a contiguous block: the other
// folds' system is K without a block of rows and columns, used in place.
// The search runs over log10(alpha / mean diag K): down a grid from 4 to -8
// in steps of 2 until the error rises below the best point (twice while the
// best is the top one; widening to -16 and 8 when the best is at an edge),
// then refines by Brent's method around the best grid point.
// "No update" (alpha = infinity: the full model, i.e. dropout) is a
// candidate too; when it wins, Reduced.Lambda is +Inf. Problem.Lambda > 0
// fixes alpha and skips the search.
type Lazy struct{}

// Name returns "lazy".
func (Lazy) Name() string { return "lazy" }

// Search bounds, in decades relative to mean diag K: the grid, how far it
// widens when the best point is at an edge, and the refinement's absolute
// tolerance (Brent's method stops with the minimum located to within about
// 2 searchTol: 0.1 decades, 26% in alpha, finer than the CV error can tell
// apart) and its budget of evaluations.
const (
	gridLo, gridHi   = -8.0, 4.0
	gridStep         = 2.0
	widenLo, widenHi = -16.0, 8.0
	searchTol        = 0.05
	brentIterations  = 12
	foldSeedPerturb  = 0x1a2f01d5
)

// errSingular marks a ridge system that cannot be solved at a candidate
// penalty; the search scores such a candidate as unusable.
var errSingular = errors.New("singular ridge system")

// Reduce fits the lazy reduced model for feature f.
func (Lazy) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	g, ok := framework.AsGradienter(p.Full)
	if !ok {
		return framework.Reduced{}, framework.Usagef("estimator lazy needs a backend with gradients; backend %q has none (use dropout or retrain)", p.BackendName)
	}
	dropped := p.Drop(p.XTrain, f)
	n1, _ := dropped.Dims()
	// Rows in fold order: fold k is rows bounds[k]..bounds[k+1].
	var order, bounds []int
	if p.Lambda <= 0 {
		for _, fold := range foldsOf(n1, p.Folds, p.Seed) {
			bounds = append(bounds, len(order))
			order = append(order, fold...)
		}
		bounds = append(bounds, n1)
	} else {
		order = allRows(n1)
	}
	x := rowsOf(dropped, order)
	// K outputs: targets and residuals are stacked, row i*K + k.
	k := 1
	if p.Task == framework.Multiclass {
		k = p.Classes
	}
	targets := make([]float64, n1*k)
	for i, r := range order {
		if k == 1 {
			targets[i] = p.YTrain[r]
		} else {
			targets[i*k+int(p.YTrain[r])] = 1
		}
	}
	base, err := g.Predict(ctx, x)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict train split: %w", err)
	}
	if r, c := base.Dims(); r != n1 || c != k {
		return framework.Reduced{}, fmt.Errorf("predict train split: backend returned %d x %d predictions for %d rows, want %d x %d", r, c, n1, n1, k)
	}
	e := make([]float64, n1*k)
	floats.SubTo(e, targets, base.RawMatrix().Data)
	if i := slices.IndexFunc(e, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }); i >= 0 {
		return framework.Reduced{}, fmt.Errorf("the full model's prediction for train row %d (feature %s dropped) is not finite", order[i/k]+1, f.Name)
	}
	rp, err := newRidge(ctx, g, x, e, k, bounds)
	if err != nil {
		return framework.Reduced{}, err
	}

	alpha := p.Lambda
	if alpha <= 0 {
		alpha, err = chooseAlpha(ctx, g, rp, targets, e, bounds, k)
		if err != nil {
			return framework.Reduced{}, err
		}
	}
	xev := p.Drop(p.XEval, f)
	if math.IsInf(alpha, 1) {
		pred, err := g.Predict(ctx, xev)
		if err != nil {
			return framework.Reduced{}, fmt.Errorf("predict evaluation split: %w", err)
		}
		return framework.Reduced{Pred: pred, Lambda: alpha}, nil
	}
	shift, err := rp.solveAll(ctx, alpha)
	if err != nil {
		return framework.Reduced{}, err
	}
	shift.X = xev
	preds, err := framework.PredictShifts(ctx, g, []framework.Shift{shift})
	if err == nil && len(preds) != 1 {
		err = fmt.Errorf("%d predictions for one shift", len(preds))
	}
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict evaluation split at shifted parameters: %w", err)
	}
	return framework.Reduced{Pred: preds[0], Lambda: alpha}, nil
}

// chooseAlpha runs the cross-validated search described on Lazy. The rows of
// x are in fold order: fold f is rows bounds[f]..bounds[f+1]; targets and e
// (the full model's residual targets - h(x)) stack k outputs per row.
func chooseAlpha(ctx context.Context, g framework.Gradienter, rp ridge, targets, e []float64, bounds []int, k int) (float64, error) {
	n := len(e)
	type fold struct {
		solve foldSolver
		yHeld []float64 // k per row
	}
	fs := make([]fold, len(bounds)-1)
	noUpdate := floats.Dot(e, e) / float64(n)
	for f := range fs {
		lo, hi := bounds[f], bounds[f+1]
		s, err := rp.fold(ctx, lo, hi)
		if err != nil {
			return 0, fmt.Errorf("fold %d: %w", f+1, err)
		}
		fs[f] = fold{solve: s, yHeld: targets[lo*k : hi*k]}
	}
	scale := rp.meanDiag()
	if !(scale > 0) {
		return math.Inf(1), nil // no gradient signal: nothing to update
	}
	cvErr := func(ts []float64) ([]float64, error) {
		alphas := make([]float64, len(ts))
		for i, t := range ts {
			alphas[i] = scale * math.Pow(10, t)
		}
		// Each fold's solver (the Krylov solves, local work) gives its
		// shifts; all folds' go to the model in one batch (one round trip
		// behind the plugin transport), and their errors are summed in
		// fold order.
		shifts := make([][]*framework.Shift, len(fs))
		for i, f := range fs {
			var err error
			if shifts[i], err = f.solve(ctx, alphas); err != nil {
				return nil, fmt.Errorf("cross-validation fold %d: %w", i+1, err)
			}
		}
		var batch []framework.Shift
		for _, fsh := range shifts {
			for _, sh := range fsh {
				if sh != nil {
					batch = append(batch, *sh)
				}
			}
		}
		var got []*mat.Dense
		if len(batch) > 0 {
			var err error
			if got, err = framework.PredictShifts(ctx, g, batch); err != nil {
				return nil, fmt.Errorf("cross-validation predict: %w", err)
			}
		}
		if len(got) != len(batch) {
			return nil, fmt.Errorf("cross-validation predict: %d predictions for %d shifts", len(got), len(batch))
		}
		preds := make([][]*mat.Dense, len(fs))
		for i, fsh := range shifts {
			preds[i] = make([]*mat.Dense, len(alphas))
			for c, sh := range fsh {
				if sh != nil {
					preds[i][c], got = got[0], got[1:]
				}
			}
		}
		sse := make([]float64, len(ts))
		for i, f := range fs {
			for c, pred := range preds[i] {
				if pred == nil {
					sse[c] = math.Inf(1)
					continue
				}
				if r, cols := pred.Dims(); r*k != len(f.yHeld) || cols != k {
					return nil, fmt.Errorf("cross-validation predict: backend returned %d x %d predictions for %d rows", r, cols, len(f.yHeld)/k)
				}
				for r, yv := range f.yHeld {
					d := yv - pred.At(r/k, r%k)
					sse[c] += d * d
				}
			}
		}
		for c := range sse {
			sse[c] /= float64(n)
			if math.IsNaN(sse[c]) {
				sse[c] = math.Inf(1)
			}
		}
		return sse, nil
	}
	best, bestErr, err := searchLogAlpha(cvErr, noUpdate)
	if err != nil {
		return 0, err
	}
	if noUpdate <= bestErr {
		return math.Inf(1), nil
	}
	return scale * math.Pow(10, best), nil
}

// searchLogAlpha minimises f over t = log10(alpha / mean diag K). It walks
// the grid of step gridStep down from gridHi, one point at a time, and stops
// at the first rise below an interior best point, or at the second rise
// while the best is still the top one: the CV error is huge for tiny alpha,
// where the network overshoots, and flat near the no-update error for huge
// alpha, so a dip is bracketed from above, the tiny penalties (the only
// expensive ones for the Krylov fold solvers) are asked for only when the
// error keeps falling towards them, and a bump in the flat part cannot end
// the walk before the dip. The walk continues below gridLo (down to
// widenLo) while the best point is the last one, and above gridHi (up to
// widenHi) while the best is the top one. It then refines inside the
// bracket [best - gridStep, best + gridStep], which holds the minimum when
// f is unimodal, by Brent's method (parabolic steps through the three best
// points, golden section when they misbehave). It returns the best t seen
// and f there; f is asked for about 10 values on a smooth curve.
//
// fInf is f at t = +Inf (no update), known without evaluation. When the
// walk ends with the top of the grid best and no better than fInf, and the
// next point above is no better either, the error only grows as alpha falls
// from infinity: the search returns +Inf at once (four evaluations instead
// of about nine, for what is the common case of a null feature). When the widened range's top is still the best, the
// minimum lies beyond it, in the flat part, and refining inside the range
// would only chase noise: the top is returned unrefined.
func searchLogAlpha(f func(ts []float64) ([]float64, error), fInf float64) (best, bestErr float64, err error) {
	seen := map[float64]float64{}
	eval := func(t float64) (float64, error) {
		if v, ok := seen[t]; ok {
			return v, nil
		}
		vs, err := f([]float64{t})
		if err != nil {
			return 0, err
		}
		seen[t] = vs[0]
		if vs[0] < bestErr {
			best, bestErr = t, vs[0]
		}
		return vs[0], nil
	}
	bestErr = math.Inf(1)
	best = gridHi
	rises := 0
	for t := gridHi; t >= widenLo; t -= gridStep {
		if t < gridLo && best != t+gridStep {
			break
		}
		before := bestErr
		if _, err := eval(t); err != nil {
			return 0, 0, err
		}
		if bestErr < before {
			rises = 0
			continue
		}
		rises++
		if rises == 2 || (rises == 1 && best < gridHi) {
			break
		}
	}
	if math.IsInf(bestErr, 1) {
		// No usable penalty among the large ones; smaller ones are only
		// more singular.
		return best, bestErr, nil
	}
	if best == gridHi && fInf <= bestErr {
		// One more point above the grid, where a slight update may still
		// beat none; if it does not, no update.
		if _, err := eval(gridHi + gridStep); err != nil {
			return 0, 0, err
		}
		if fInf <= bestErr {
			return math.Inf(1), fInf, nil
		}
	}
	for hi := gridHi; best == hi && hi+gridStep <= widenHi; {
		hi += gridStep
		if _, err := eval(hi); err != nil {
			return 0, 0, err
		}
	}
	if best+gridStep > widenHi {
		return best, bestErr, nil
	}
	a, c := best-gridStep, best+gridStep
	fa, okA := seen[a]
	fc, okC := seen[c]
	if !okA || !okC || math.IsInf(fa, 0) || math.IsInf(fc, 0) {
		// The best is at an end of the widened range (or next to unusable
		// penalties): refine on the side that was evaluated.
		switch {
		case okA && !math.IsInf(fa, 0):
			c = best
		case okC && !math.IsInf(fc, 0):
			a = best
		default:
			return best, bestErr, nil
		}
	}
	if err := brent(eval, a, c, best, bestErr, fa, fc); err != nil {
		return 0, 0, err
	}
	return best, bestErr, nil
}

// brent minimises f inside [a, b] from x (a <= x <= b, f(x) = fx; fa, fb
// are f at the ends when known, else ignored) by Brent's method (Brent,
// Algorithms for Minimization without Derivatives, 1973, ch. 5): a
// parabolic step through the three best points when it falls inside the
// bracket and shrinks the step, else a golden-section step into the larger
// part, to an absolute tolerance of searchTol in t. f keeps track of the
// best point itself.
func brent(f func(float64) (float64, error), a, b, x, fx, fa, fb float64) error {
	const cgold = 0.3819660112501051 // (3 - sqrt 5) / 2
	// w and v: the second best and the previous w; start them at the
	// bracket's ends, so that the first step can already be parabolic.
	w, fw, v, fv := a, fa, b, fb
	if math.IsInf(fw, 0) || math.IsNaN(fw) || w == x {
		w, fw = x, fx
	}
	if math.IsInf(fv, 0) || math.IsNaN(fv) || v == x {
		v, fv = w, fw
	}
	if fv < fw {
		w, fw, v, fv = v, fv, w, fw
	}
	d, e := 0.0, b-a
	for it := 0; it < brentIterations; it++ {
		xm := 0.5 * (a + b)
		tol1 := searchTol
		tol2 := 2 * tol1
		if math.Abs(x-xm) <= tol2-0.5*(b-a) {
			return nil
		}
		parabolic := false
		if math.Abs(e) > tol1 && w != x && v != x && v != w {
			r := (x - w) * (fx - fv)
			q := (x - v) * (fx - fw)
			p := (x-v)*q - (x-w)*r
			q = 2 * (q - r)
			if q > 0 {
				p = -p
			}
			q = math.Abs(q)
			if math.Abs(p) < math.Abs(0.5*q*e) && p > q*(a-x) && p < q*(b-x) {
				e, d = d, p/q
				parabolic = true
				if u := x + d; u-a < tol2 || b-u < tol2 {
					d = math.Copysign(tol1, xm-x)
				}
			}
		}
		if !parabolic {
			if x >= xm {
				e = a - x
			} else {
				e = b - x
			}
			d = cgold * e
		}
		u := x + d
		if math.Abs(d) < tol1 {
			u = x + math.Copysign(tol1, d)
		}
		fu, err := f(u)
		if err != nil {
			return err
		}
		if fu <= fx {
			if u >= x {
				a = x
			} else {
				b = x
			}
			v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
			continue
		}
		if u < x {
			a = u
		} else {
			b = u
		}
		switch {
		case fu <= fw || w == x:
			v, fv, w, fw = w, fw, u, fu
		case fu <= fv || v == x || v == w:
			v, fv = u, fu
		}
	}
	return nil
}

// foldsOf splits 0..n-1 into k seeded folds of near-equal size, each sorted.
func foldsOf(n, k int, seed int64) [][]int {
	perm := rand.New(rand.NewPCG(uint64(seed), foldSeedPerturb)).Perm(n)
	folds := make([][]int, k)
	for i, r := range perm {
		folds[i%k] = append(folds[i%k], r)
	}
	for _, f := range folds {
		slices.Sort(f)
	}
	return folds
}

func rowsOf(x *mat.Dense, rows []int) *mat.Dense {
	_, c := x.Dims()
	out := mat.NewDense(len(rows), c, nil)
	for i, r := range rows {
		out.SetRow(i, x.RawRowView(r))
	}
	return out
}

// outside returns the rows of x other than lo..hi, as one new matrix.
func outside(x *mat.Dense, lo, hi int) *mat.Dense {
	n, c := x.Dims()
	out := mat.NewDense(n-(hi-lo), c, nil)
	raw, src := out.RawMatrix(), x.RawMatrix()
	for i, o := 0, 0; i < n; i++ {
		if i >= lo && i < hi {
			continue
		}
		copy(raw.Data[o*raw.Stride:o*raw.Stride+c], src.Data[i*src.Stride:i*src.Stride+c])
		o++
	}
	return out
}

// ridge is the lazy ridge problem on one feature's dropped train split, in
// dual or primal form, with its rows in fold order.
type ridge interface {
	// meanDiag is trace(K)/n1 = trace(G)/n1, the penalty's natural scale.
	meanDiag() float64
	// solveAll returns the update fitted on all rows, as a Shift without
	// its X: dtheta, or in the dual form when the backend has kernels.
	solveAll(ctx context.Context, alpha float64) (framework.Shift, error)
	// fold prepares the fit without samples lo..hi (rows lo*k..hi*k) and
	// returns a solver for any set of penalties.
	fold(ctx context.Context, lo, hi int) (foldSolver, error)
}

// foldSolver returns, for each penalty, the shift whose prediction is the
// network's on the fold's held-out samples at theta_f + dtheta (nil where
// the system could not be solved): in the dual form when the backend has
// the structured kernel, so that the M-vector Phi_T^T a is formed next to
// the model.
type foldSolver func(ctx context.Context, alphas []float64) ([]*framework.Shift, error)

// maxRidgeDim bounds the side of the ridge system, min(n1 k, M), that lazy
// cross-validates: each fold holds a d x d copy of the system (72 MB at
// d = 3000) and each Lanczos step costs 2 d^2 flops, up to d steps per fold
// when the search goes to tiny penalties, and forming the system (Gram or
// kernel) costs more still.
const maxRidgeDim = 3000

// maxFixedRidgeDim and maxJacobian bound what a fixed penalty needs: the
// d x d system, a Krylov basis of up to d/6 vectors and, when that does not
// converge, a Cholesky factorisation (d^3/3 flops, d^2 doubles: 1.1 GB at
// 12000); with k > 1 outputs, the (n1 k) x M Jacobian (256M doubles is 2
// GiB).
const (
	maxFixedRidgeDim = 12000
	maxJacobian      = 1 << 28
)

// newRidge sets up the ridge problem for the rows of x with k outputs each
// (e stacks them, row i*k + j; with k > 1 the Jacobian's rows are stacked
// the same way and the structured kernel is not used). bounds are the fold
// boundaries in rows of x (fold f is rows bounds[f]..bounds[f+1]) when the
// penalty is cross-validated, nil when it is fixed.
func newRidge(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, k int, bounds []int) (ridge, error) {
	cv := len(bounds) > 1
	samples, _ := x.Dims()
	n := samples * k
	m := g.NumParams()
	if m < 1 {
		return nil, fmt.Errorf("the model reports %d parameters", m)
	}
	switch d := min(n, m); {
	case cv && d > maxRidgeDim:
		return nil, framework.Usagef("lazy would cross-validate a %d x %d ridge system per feature (%d train rows x %d outputs, %d parameters): too slow here; fix the penalty with --lambda, use lazy-es, or a smaller network",
			d, d, samples, k, m)
	case d > maxFixedRidgeDim || (k > 1 && n*m > maxJacobian):
		return nil, framework.Usagef("lazy would need a %d x %d ridge system and a %d x %d Jacobian per feature (%d train rows x %d outputs, %d parameters): too large; use lazy-es or a smaller network",
			d, d, n, m, samples, k, m)
	}
	if n > m {
		return newPrimal(ctx, g, x, e, k, bounds)
	}
	kern, hasKernel := framework.AsKerneler(g)
	hasKernel = hasKernel && k == 1
	var j *mat.Dense
	if !hasKernel {
		var err error
		if j, err = g.Jacobian(ctx, x); err != nil {
			return nil, fmt.Errorf("jacobian: %w", err)
		}
		if r, c := j.Dims(); r != n || c != m {
			return nil, fmt.Errorf("jacobian: backend returned %d x %d for %d rows and %d parameters", r, c, n, m)
		}
	}
	d := &dual{e: e, x: x, j: j, m: m, k: k}
	if hasKernel {
		km, err := kern.Kernel(ctx, x, nil)
		if err != nil {
			return nil, fmt.Errorf("kernel: %w", err)
		}
		if r, c := km.Dims(); r != n || c != n {
			return nil, fmt.Errorf("kernel: backend returned %d x %d for %d rows", r, c, n)
		}
		d.kfull = symmetrize(km)
	} else {
		var jj mat.SymDense
		jj.SymOuterK(1, j)
		d.kfull = linalg.Full(&jj).RawMatrix()
	}
	d.kmat = mat.NewSymDense(n, d.kfull.Data)
	return d, nil
}

// dual solves in the n1 x n1 kernel space: dtheta = Phi^T (K + alpha I)^-1 e.
// With a Kerneler backend neither K nor Phi^T a needs the Jacobian: the
// backend's structured products cost about as much as a product with Phi
// (for an MLP, one small matrix product per layer) without forming or
// moving its n1 x M entries (27 MB on the high-dimensional setting, whose
// every product with it streams all of them from memory); without one, the
// Jacobian j is held and K = Phi Phi^T.
type dual struct {
	kfull blas64.General // K with both triangles
	kmat  *mat.SymDense  // the same storage as a SymDense
	e     []float64
	x     *mat.Dense
	j     *mat.Dense // the Jacobian, held when the backend has no kernel
	m     int
	k     int // outputs: rows per sample
}

func (d *dual) meanDiag() float64 {
	n := d.kmat.SymmetricDim()
	t := 0.0
	for i := 0; i < n; i++ {
		t += d.kmat.At(i, i)
	}
	return t / float64(n)
}

// phiTMany returns (J_T^T A^T)^T = A J_T (k x M) for the rows T = all but
// lo..hi of the held Jacobian; A (k x |T|) has one row per vector. This
// orientation streams J's rows once (gonum's transposed-left product was 5x
// slower here).
func (d *dual) phiTMany(lo, hi int, a *mat.Dense) *mat.Dense {
	n, _ := d.j.Dims()
	k, _ := a.Dims()
	out := mat.NewDense(k, d.m, nil)
	var part mat.Dense
	if lo > 0 {
		out.Mul(a.Slice(0, k, 0, lo), d.j.Slice(0, lo, 0, d.m))
	}
	if hi < n {
		part.Mul(a.Slice(0, k, lo, n-(hi-lo)), d.j.Slice(hi, n, 0, d.m))
		out.Add(out, &part)
	}
	return out
}

func (d *dual) solveAll(ctx context.Context, alpha float64) (framework.Shift, error) {
	n := d.kmat.SymmetricDim()
	a, err := shiftedSolve(ctx, fullOp{d.kfull}, d.kmat, alpha, d.e)
	if err != nil {
		return framework.Shift{}, err
	}
	if d.j == nil {
		return framework.Shift{XTrain: d.x, A: a}, nil
	}
	return framework.Shift{DTheta: d.phiTMany(n, n, mat.NewDense(1, len(a), a)).RawMatrix().Data}, nil
}

func (d *dual) fold(_ context.Context, lo, hi int) (foldSolver, error) {
	_, p := d.x.Dims()
	xH := d.x.Slice(lo, hi, 0, p).(*mat.Dense)
	lo, hi = lo*d.k, hi*d.k // rows of K
	// K_TT is K without the fold's rows and columns: used in place, no copy.
	et := append(append([]float64(nil), d.e[:lo]...), d.e[hi:]...)
	kr := newKrylov(holeOp{k: d.kfull, lo: lo, hi: hi}, et)
	var xT *mat.Dense
	if d.j == nil {
		xT = outside(d.x, lo/d.k, hi/d.k)
	}
	return func(ctx context.Context, alphas []float64) ([]*framework.Shift, error) {
		as, usable, err := kr.solveMany(ctx, alphas)
		if err != nil {
			return nil, err
		}
		var dthetas *mat.Dense
		if d.j != nil {
			dthetas = d.phiTMany(lo, hi, as)
		}
		shifts := make([]*framework.Shift, len(alphas))
		for c := range alphas {
			switch {
			case !usable[c]:
			case d.j != nil:
				shifts[c] = &framework.Shift{X: xH, DTheta: dthetas.RawRowView(c)}
			default:
				shifts[c] = &framework.Shift{X: xH, XTrain: xT, A: as.RawRowView(c)}
			}
		}
		return shifts, nil
	}, nil
}

// primal solves in the M x M parameter space: (G + alpha I) dtheta = Phi^T e.
// G and Phi^T e are sums over the folds' row blocks, each block's part
// formed once by framework.GramOf (the backend's Gram when it has one, so
// that a plugin sends M(M+1)/2 values instead of the block's Jacobian;
// else a symmetric rank-k update of the Jacobian: n1 M^2 flops in all), so
// that a fold's training Gram is a subtraction rather than another rank-k
// downdate. The Jacobian itself is never held.
type primal struct {
	model  framework.Gradienter
	x      *mat.Dense    // the samples, in fold order
	k      int           // outputs: Jacobian rows per sample
	rows   int           // Jacobian rows, samples x k
	g      *mat.SymDense // Phi^T Phi
	b      []float64     // Phi^T e
	blocks []primalBlock
}

// primalBlock is the part of G and Phi^T e from samples lo..hi.
type primalBlock struct {
	lo, hi int
	g      *mat.SymDense
	b      []float64
}

// newPrimal forms G and Phi^T e for the samples x and residuals e (k per
// sample), by fold blocks when bounds (in samples) are given.
func newPrimal(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, k int, bounds []int) (*primal, error) {
	samples, cols := x.Dims()
	m := g.NumParams()
	p := &primal{x: x, rows: samples * k, g: mat.NewSymDense(m, nil), b: make([]float64, m)}
	if len(bounds) < 2 {
		bounds = []int{0, samples}
	}
	for f := 0; f+1 < len(bounds); f++ {
		lo, hi := bounds[f], bounds[f+1]
		bg, bb, err := framework.GramOf(ctx, g, x.Slice(lo, hi, 0, cols), e[lo*k:hi*k])
		if err != nil {
			return nil, fmt.Errorf("gram: %w", err)
		}
		if bg.SymmetricDim() != m || len(bb) != m {
			return nil, fmt.Errorf("gram: backend returned %d x %d and %d values for %d parameters", bg.SymmetricDim(), bg.SymmetricDim(), len(bb), m)
		}
		p.g.AddSym(p.g, bg)
		floats.Add(p.b, bb)
		p.blocks = append(p.blocks, primalBlock{lo: lo, hi: hi, g: bg, b: bb})
	}
	if len(p.blocks) == 1 {
		p.blocks = nil // no folds: only the totals are used
	}
	return p, nil
}

func (p *primal) meanDiag() float64 {
	m := p.g.SymmetricDim()
	t := 0.0
	for i := 0; i < m; i++ {
		t += p.g.At(i, i)
	}
	return t / float64(p.rows)
}

func (p *primal) solveAll(ctx context.Context, alpha float64) (framework.Shift, error) {
	dtheta, err := shiftedSolve(ctx, upperOp{p.g.RawSymmetric()}, p.g, alpha, p.b)
	return framework.Shift{DTheta: dtheta}, err
}

func (p *primal) fold(_ context.Context, lo, hi int) (foldSolver, error) {
	_, cols := p.x.Dims()
	xH := p.x.Slice(lo, hi, 0, cols).(*mat.Dense)
	i := slices.IndexFunc(p.blocks, func(b primalBlock) bool { return b.lo == lo && b.hi == hi })
	if i < 0 {
		return nil, fmt.Errorf("no fold of samples %d..%d among the blocks the Gram was formed by", lo, hi)
	}
	// G - G_fold and b - b_fold, with both triangles for the Krylov solver.
	m := p.g.SymmetricDim()
	gt := blas64.General{Rows: m, Cols: m, Stride: m, Data: make([]float64, m*m)}
	tot, blk := p.g.RawSymmetric(), p.blocks[i].g.RawSymmetric()
	for r := 0; r < m; r++ {
		for c := r; c < m; c++ {
			v := tot.Data[r*tot.Stride+c] - blk.Data[r*blk.Stride+c]
			gt.Data[r*m+c], gt.Data[c*m+r] = v, v
		}
	}
	bt := make([]float64, m)
	floats.SubTo(bt, p.b, p.blocks[i].b)
	kr := newKrylov(fullOp{gt}, bt)
	return func(ctx context.Context, alphas []float64) ([]*framework.Shift, error) {
		dthetas, usable, err := kr.solveMany(ctx, alphas)
		if err != nil {
			return nil, err
		}
		shifts := make([]*framework.Shift, len(alphas))
		for c := range alphas {
			if usable[c] {
				shifts[c] = &framework.Shift{X: xH, DTheta: dthetas.RawRowView(c)}
			}
		}
		return shifts, nil
	}, nil
}

// choleskySolve solves (A + alpha I) x = r.
func choleskySolve(a *mat.SymDense, alpha float64, r []float64) ([]float64, error) {
	n := a.SymmetricDim()
	s := mat.NewSymDense(n, nil)
	s.CopySym(a)
	for i := 0; i < n; i++ {
		s.SetSym(i, i, s.At(i, i)+alpha)
	}
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		return nil, fmt.Errorf("%w: the %d x %d system at alpha %g is not positive definite", errSingular, n, n, alpha)
	}
	x := mat.NewVecDense(n, nil)
	if err := ch.SolveVecTo(x, mat.NewVecDense(n, r)); err != nil {
		return nil, fmt.Errorf("ridge solve: %w", err)
	}
	return x.RawVector().Data, nil
}

// symmetrize replaces the square k by its symmetric part (k + k^T) / 2, in
// place (k is the caller's to give up), and returns its storage with both
// triangles.
func symmetrize(k *mat.Dense) blas64.General {
	n, _ := k.Dims()
	raw := k.RawMatrix()
	if raw.Stride != n {
		raw = mat.DenseCopyOf(k).RawMatrix()
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			v := 0.5 * (raw.Data[i*n+j] + raw.Data[j*n+i])
			raw.Data[i*n+j], raw.Data[j*n+i] = v, v
		}
	}
	return raw
}

func allRows(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// lapackImpl is the LAPACK the lazy solver calls (see internal/linalg).
var lapackImpl = linalg.LAPACK
