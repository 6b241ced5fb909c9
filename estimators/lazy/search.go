package lazy

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

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
)

// chooseAlpha runs the cross-validated search described on Estimator for
// the ridge problem rp of p's rows, which are in fold order: fold f is rows
// bounds[f]..bounds[f+1]. tol is the refinement's tolerance in decades.
// With near > 0 (a penalty for these rows, the baseline's) the search
// starts there instead of walking the grid (searchNear), at the top of the
// grid for near +Inf, a baseline that chose no update (nearStart).
func (p *problem) chooseAlpha(ctx context.Context, rp ridge, bounds []int, tol, near float64) (float64, error) {
	n := len(p.e)
	stages := framework.StagesFrom(ctx)
	defer stages.Start(stageSearch)(0)
	cv := &crossValidation{g: p.g, folds: make([]cvFold, len(bounds)-1), n: n, k: p.k, stages: stages}
	noUpdate := floats.Dot(p.e, p.e) / float64(n)
	for f := range cv.folds {
		lo, hi := bounds[f], bounds[f+1]
		s, err := rp.fold(ctx, lo, hi)
		if err != nil {
			return 0, fmt.Errorf("fold %d: %w", f+1, err)
		}
		cv.folds[f] = cvFold{solve: s, yHeld: p.targets[lo*p.k : hi*p.k]}
	}
	cv.scale = rp.meanDiag()
	if !(cv.scale > 0) {
		return math.Inf(1), nil // no gradient signal: nothing to update
	}
	cvErr := func(ts []float64) ([]float64, error) { return cv.errors(ctx, ts) }
	var best, bestErr float64
	var err error
	if t0, ok := nearStart(near, cv.scale); ok {
		best, bestErr, err = searchNear(cvErr, noUpdate, t0, tol, false)
	} else {
		best, bestErr, err = searchLogAlpha(cvErr, noUpdate, tol, 0)
	}
	if err != nil {
		return 0, err
	}
	if noUpdate <= bestErr {
		return math.Inf(1), nil
	}
	return cv.scale * math.Pow(10, best), nil
}

// cvFold is one cross-validation fold: its solver, and its held-out rows'
// targets (k per row).
type cvFold struct {
	solve foldSolver
	yHeld []float64
}

// crossValidation is chooseAlpha's cross-validated error over n rows of k
// outputs, the penalties in decades relative to scale (mean diag K).
type crossValidation struct {
	g      framework.Gradienter
	folds  []cvFold
	scale  float64
	n, k   int
	stages *framework.Stages
}

// errors returns the cross-validated mean squared error at each t =
// log10(alpha / scale): +Inf where a fold's solver gives no update or the
// error is NaN.
func (cv *crossValidation) errors(ctx context.Context, ts []float64) ([]float64, error) {
	alphas := make([]float64, len(ts))
	for i, t := range ts {
		alphas[i] = cv.scale * math.Pow(10, t)
	}
	preds, err := cv.predict(ctx, alphas)
	if err != nil {
		return nil, err
	}
	sse := make([]float64, len(ts))
	for i, f := range cv.folds {
		for c, pred := range preds[i] {
			if pred == nil {
				sse[c] = math.Inf(1)
				continue
			}
			e, err := sqError(pred, f.yHeld, cv.k)
			if err != nil {
				return nil, fmt.Errorf("cross-validation predict: %w", err)
			}
			sse[c] += e
		}
	}
	for c := range sse {
		sse[c] /= float64(cv.n)
		if math.IsNaN(sse[c]) {
			sse[c] = math.Inf(1)
		}
	}
	return sse, nil
}

// predict returns preds[f][c], fold f's held-out predictions at alphas[c]
// (nil where its solver gives no shift). Each fold's solver (the Krylov
// solves, local work) gives its shifts; all folds' go to the model in one
// batch (one round trip behind the plugin transport), in fold order.
func (cv *crossValidation) predict(ctx context.Context, alphas []float64) ([][]*mat.Dense, error) {
	shifts := make([][]*framework.Shift, len(cv.folds))
	for i, f := range cv.folds {
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
	for i := range batch {
		cv.stages.Add(stageSearch, 0, shiftFlops(&batch[i], cv.g.NumParams()))
	}
	var got []*mat.Dense
	if len(batch) > 0 {
		var err error
		if got, err = framework.PredictShifts(ctx, cv.g, batch); err != nil {
			return nil, fmt.Errorf("cross-validation predict: %w", err)
		}
	}
	if len(got) != len(batch) {
		return nil, fmt.Errorf("cross-validation predict: %d predictions for %d shifts", len(got), len(batch))
	}
	preds := make([][]*mat.Dense, len(cv.folds))
	for i, fsh := range shifts {
		preds[i] = make([]*mat.Dense, len(alphas))
		for c, sh := range fsh {
			if sh != nil {
				preds[i][c], got = got[0], got[1:]
			}
		}
	}
	return preds, nil
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
//
// With flat > 0 (for an f whose cost grows as t falls: candidates from a
// Krylov basis) the first rise below a best top ends the walk at once
// when the error there exceeds fInf by more than the fraction flat: an
// update that much worse than none is past the flat part where a bump
// could hide a dip below, and the second point below the top (gridHi - 2
// gridStep, the costliest the walk asks for) is not asked for.
func searchLogAlpha(f func(ts []float64) ([]float64, error), fInf, tol, flat float64) (best, bestErr float64, err error) {
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
		if rises == 2 || (rises == 1 && (best < gridHi || (flat > 0 && seen[t] > fInf*(1+flat)))) {
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
	if err := refine(eval, seen, best-gridStep, best+gridStep, best, bestErr, tol, false); err != nil {
		return 0, 0, err
	}
	return best, bestErr, nil
}

// nearStep is the bracket searchNear starts with around a known penalty,
// in decades.
const nearStep = 0.5

// flatNear is the relative rise of the cross-validated error, from the
// best point to the worse of its neighbours nearStep away, below which
// searchNear does not refine.
const flatNear = 2e-3

// nearStart is where searchNear starts for the baseline's penalty near, in
// decades of the unit scale (mean diag K): at near itself when it is
// finite, and at the top of the grid when the baseline chose no update
// (+Inf). ok is false without a baseline's penalty (near 0): the grid's
// walk then. From the top the walk goes down by nearStep while the error
// falls, so it finds a feature's dip when the error falls towards it; a
// dip behind a bump (the error rising first, then falling far below) is
// missed, and the feature keeps a penalty near the top: an update of
// little effect, the full model's predictions (dropout's VI), not a
// ruinous one. The grid's walk would see past the bump with its point 4
// decades below the top, which for Krylov candidates is the costliest;
// where the baseline chooses no update, the features' penalties are
// typically at or above the top too, and starting there spares the search
// the grid walk's costliest Krylov steps.
func nearStart(near, scale float64) (t0 float64, ok bool) {
	switch {
	case math.IsInf(near, 1):
		return gridHi, true
	case near > 0:
		return math.Log10(near / scale), true
	}
	return 0, false
}

// searchNear minimises f over t from a point t0 where the minimum is
// expected (the baseline's penalty, for a feature's): it evaluates t0 and
// t0 -+ nearStep in one batch, walks on by nearStep while an end of the
// bracket is the best (within widenLo..widenHi), and refines by Brent's
// method in the bracket around the best. About 5 evaluations instead of
// searchLogAlpha's 8-11. fInf is f at t = +Inf (no update): when the walk
// up has gone a step beyond the bracket with the error still falling and
// no better than fInf, it stops there (as searchLogAlpha does at the top
// of its grid), and the caller keeps the full model.
//
// With lowLast (for an f whose cost grows as t falls: candidates from a
// Krylov basis, which a smaller penalty makes longer), t0 - nearStep is
// asked for only after t0 and t0 + nearStep, and only when t0 is the
// better of the two: when the error falls towards larger penalties, a
// unimodal f is larger still below t0, and the search goes on as it would
// have without that point.
func searchNear(f func(ts []float64) ([]float64, error), fInf, t0, tol float64, lowLast bool) (best, bestErr float64, err error) {
	seen := map[float64]float64{}
	bestErr = math.Inf(1)
	eval := func(ts ...float64) error {
		vs, err := f(ts)
		if err != nil {
			return err
		}
		for i, t := range ts {
			seen[t] = vs[i]
			if vs[i] < bestErr {
				best, bestErr = t, vs[i]
			}
		}
		return nil
	}
	// The bracket's points are t0 + i nearStep for integers i (lo..hi),
	// computed from i, so that a point is the same float however it was
	// reached.
	t0 = math.Max(widenLo+nearStep, math.Min(widenHi-nearStep, t0))
	at := func(i int) float64 { return t0 + float64(i)*nearStep }
	lo, hi := -1, 1
	if lowLast {
		if err := eval(at(0), at(1)); err != nil {
			return 0, 0, err
		}
		if best == at(0) {
			err = eval(at(-1))
		} else {
			lo = 0
		}
	} else {
		err = eval(at(-1), at(0), at(1))
	}
	if err != nil {
		return 0, 0, err
	}
	if best == at(0) && vertexWithin(seen[at(-1)], seen[at(0)], seen[at(1)], nearStep, tol/2) {
		// The parabola through the three points has its minimum within
		// half the refinement's tolerance of t0, the baseline's refined
		// minimum: the feature's curve is the baseline's there, up to
		// what the refinement (whose first step is that parabola's)
		// would resolve.
		return best, bestErr, nil
	}
	for !math.IsInf(bestErr, 1) {
		switch {
		case best == at(lo) && at(lo-1) >= widenLo:
			lo--
			if err := eval(at(lo)); err != nil {
				return 0, 0, err
			}
			continue
		case best == at(hi) && hi >= 2 && fInf <= bestErr:
			// Still falling towards large penalties a step above the
			// bracket, and no better than no update: no update
			// (searchLogAlpha's rule at the top of its grid).
			return best, bestErr, nil
		case best == at(hi) && at(hi+1) <= widenHi:
			hi++
			if err := eval(at(hi)); err != nil {
				return 0, 0, err
			}
			continue
		}
		break
	}
	if math.IsInf(bestErr, 1) {
		return best, bestErr, nil
	}
	bi := lo
	for bi < hi && at(bi) != best {
		bi++
	}
	fl, okL := seen[at(bi-1)]
	fr, okR := seen[at(bi+1)]
	if okL && okR && math.Max(fl, fr)-bestErr <= flatNear*bestErr {
		// Flat around the best point: every penalty in the bracket
		// predicts the held-out folds as well to within flatNear, far
		// below what the cross-validated error can tell apart.
		return best, bestErr, nil
	}
	one := func(t float64) (float64, error) {
		if v, ok := seen[t]; ok {
			return v, nil
		}
		if err := eval(t); err != nil {
			return 0, err
		}
		return seen[t], nil
	}
	if err := refine(one, seen, at(bi-1), at(bi+1), best, bestErr, tol, true); err != nil {
		return 0, 0, err
	}
	return best, bestErr, nil
}

// vertexWithin reports whether the parabola through (-h, fl), (0, f0) and
// (h, fr), with f0 below both ends, has its minimum within tol of 0 (a
// parabola flat to rounding: anywhere, so yes); an end that is not finite
// (an unusable penalty) makes no parabola.
func vertexWithin(fl, f0, fr, h, tol float64) bool {
	if math.IsInf(fl, 0) || math.IsInf(fr, 0) {
		return false
	}
	curv := fl - 2*f0 + fr // > 0
	return h*math.Abs(fl-fr) <= 2*tol*curv
}

// refine is the last step of both searches: Brent's method (brent) in the
// bracket [a, c] around the best point so far (a < best < c, the points
// next to it that the search walked). An end that was not evaluated (not in
// seen) or whose error is infinite is replaced by best, so that the bracket
// is the side that was evaluated; with neither side, best is not refined.
// eval evaluates f at one point, reusing seen, and keeps track of the best
// point itself; early is brent's.
func refine(eval func(float64) (float64, error), seen map[float64]float64, a, c, best, bestErr, tol float64, early bool) error {
	fa, okA := seen[a]
	fc, okC := seen[c]
	okA = okA && !math.IsInf(fa, 0)
	okC = okC && !math.IsInf(fc, 0)
	switch {
	case okA && okC:
	case okA:
		c, fc = best, bestErr
	case okC:
		a, fa = best, bestErr
	default:
		return nil
	}
	return brent(eval, point{a, fa}, point{c, fc}, point{best, bestErr}, tol, early)
}

// point is a value t and the function's value f there (f may be unknown,
// an infinity, at a bracket's end).
type point struct{ t, f float64 }

// brent minimises f inside [lo.t, hi.t] from x0 (lo.t <= x0.t <= hi.t,
// x0.f = f(x0.t); lo.f and hi.f are f at the ends when known, else
// ignored) by Brent's method (Brent, Algorithms for Minimization without
// Derivatives, 1973, ch. 5): a parabolic step through the three best points
// when it falls inside the bracket and shrinks the step, else a
// golden-section step into the larger part, to an absolute tolerance of tol
// in t. With early it also stops where a parabolic step is within tol/4 of
// the best point (the parabola through the three best points puts the
// minimum there), instead of evaluating a point tol away to confirm it:
// for a feature's search from the baseline's penalty (searchNear), whose
// curve near that penalty is smooth, at one or two evaluations fewer. f
// keeps track of the best point itself.
func brent(f func(float64) (float64, error), lo, hi, x0 point, tol float64, early bool) error {
	const cgold = 0.3819660112501051 // (3 - sqrt 5) / 2
	a, b, x, fx, fa, fb := lo.t, hi.t, x0.t, x0.f, lo.f, hi.f
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
		tol1 := tol
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
				if early && math.Abs(d) <= 0.25*tol1 {
					// The parabola through the three best points has
					// its minimum within a quarter of the tolerance of
					// the best: done, where Brent's rule would evaluate
					// a point tol1 away to confirm it.
					return nil
				}
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

// sqError is the squared error of the predictions pred (rows x k) against
// targets (k per row, stacked), summed over the rows and outputs.
func sqError(pred *mat.Dense, targets []float64, k int) (float64, error) {
	if r, cols := pred.Dims(); r*k != len(targets) || cols != k {
		return 0, fmt.Errorf("backend returned %d x %d predictions for %d rows", r, cols, len(targets)/k)
	}
	s := 0.0
	for i, y := range targets {
		d := y - pred.At(i/k, i%k)
		s += d * d
	}
	return s, nil
}
