package estimators

import (
	"context"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
)

// The subsample's penalty, checked at full size. The penalty chosen on the
// subsample transfers to all the rows when both are on the same side of
// the interpolation threshold, stacked rows n K against parameters M: a
// ridgeless fit's variance grows as n / (M - n) below it and M / (n - M)
// above, so near it, from about M / 2 stacked rows on, a small penalty
// that the subsample's cross-validation (far below the threshold, where
// interpolating is harmless) finds best can be ruinous on all the rows.
// Measured on digits.csv (10 classes, hidden 100: 1198 train rows x 10
// outputs against 7510 parameters; the subsample 300 rows x 10): the
// subsample chose 0.02 for px_0_3, where the baseline's refit has accuracy
// 0.60 instead of the full model's 0.97, and lazy reported a VI of 0.40
// for a pixel that retrain and dropout put at 0; a subsample of 700 rows
// chose 8-36 for the same pixels.
//
// So from checkThreshold M stacked rows on, the penalty is checked on a
// seeded held-out tenth of all the train rows (the first of foldsOf's
// checkFolds, the same for every feature): the update is fitted on the other folds at the
// subsample's penalty and at larger ones, by half decades, from one
// Krylov basis (a shift of the same Krylov space), each candidate's network
// is scored by its squared error on the held-out rows, and the penalty is
// raised to the best candidate (or to no update) only when the
// subsample's is worse on significantly more held-out rows than better
// (worseBy): a penalty that merely ties keeps the
// subsample's, so the check changes nothing where the subsample
// transfers. Only larger penalties are tried: a ruinous penalty is a
// too small one, and a smaller candidate would need a larger basis (about
// 1.6-2 times the steps per decade). A subsample can also over-regularise
// (random features, 400 rows against 250 parameters: subsamples of 40-200
// rows chose 10^1.3-10^4.4 where all the rows' cross-validation chose 0.35,
// the evaluation error 0.31-2.3 against 0.19); that costs accuracy towards
// dropout's, not a ruinous model, and is left to the subsample's size.

// checkVouch: a feature's penalty of at least checkVouch times its
// baseline's, where the baseline's was checked on the same held-out rows
// (and kept or raised), is not checked again: within half a decade of a
// penalty that was not ruinous, or above it, is on the safe side. The
// baseline is checked once per fold and shared by all the features, so
// the check's cost falls on the features whose penalty is much smaller
// than the baseline's, the ones at risk: on vi bench linear --n 20000
// --width 200:100 (13333 train rows against 21601 parameters), checking
// every feature doubled lazy's Krylov steps (25 to 50 over 6 features,
// 31.7 to 60.2 GFLOP) and raised none.
const checkVouch = 0.31622776601683794 // 10^-0.5

// checkThreshold is the share of the parameters from which the stacked
// train rows have the subsample's penalty checked.
const checkThreshold = 0.5

// checkFolds: the check holds out one fold in checkFolds of the train
// rows, so that the rows it fits on (0.9 of them) are on the same side of
// the threshold as all of them but in a narrow band; with a third held
// out (the cross-validation's folds), 80 fit rows against 100 parameters
// found no fault in a penalty that was ruinous on 120 (TestCheckAlpha's
// random features).
//
// At least checkMinHeld rows are held out (a third of them when there are
// fewer than 3 checkMinHeld): the held-out losses' paired differences are
// skewed, and on a few dozen rows their standard error is not to be
// trusted (on 12 held-out rows the check raised a good penalty 10^4-fold).
const (
	checkFolds   = 10
	checkMinHeld = 100
)

// checkRaise and checkBatch bound the check's walk: at most checkRaise
// half decades above the subsample's penalty, asked for checkBatch at a
// time (one batch of shifted predictions each).
const (
	checkRaise = 16
	checkBatch = 4
)

// checkZ is the sign test's threshold in standard deviations of the number
// of held-out rows on which the subsample's penalty loses (see worseBy).
const checkZ = 3.0

// statRaised is the Reduced.Stats key of the check's raise of the penalty,
// in decades (0 when it kept the subsample's; absent when it did not run).
const statRaised = "lambda_raised"

// needsCheck reports whether n stacked train rows against m parameters
// are near or above the interpolation threshold.
func needsCheck(n, m int) bool { return float64(n) >= checkThreshold*float64(m) }

// checkAlpha checks alpha, the subsample's penalty for all the rows of x
// (targets and e stack k outputs per row), on a held-out fold, and
// returns the penalty to use (+Inf: no update), the check's Krylov steps
// and counted flops; stats gains statRaised.
func (lz Lazy) checkAlpha(ctx context.Context, g framework.Gradienter, x *mat.Dense, targets, e []float64, k int, seed int64, alpha float64, stats map[string]float64) (float64, int, float64, error) {
	n1, _ := x.Dims()
	held := foldsOf(n1, min(checkFolds, max(3, n1/checkMinHeld)), seed)[0]
	fit := make([]int, 0, n1-len(held))
	for r := range n1 {
		if _, found := slices.BinarySearch(held, r); !found {
			fit = append(fit, r)
		}
	}
	stack := func(v []float64, rows []int) []float64 {
		out := make([]float64, 0, len(rows)*k)
		for _, r := range rows {
			out = append(out, v[r*k:(r+1)*k]...)
		}
		return out
	}
	xFit, xHeld := rowsOf(x, fit), rowsOf(x, held)
	eFit, tHeld, eHeld := stack(e, fit), stack(targets, held), stack(e, held)

	kr, op, err := matrixFreeKrylov(ctx, g, xFit, eFit)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("penalty check: %w", err)
	}
	// The penalty is unnormalised: the fit rows' is alpha scaled to them.
	toFit := float64(len(fit)) / float64(n1)
	maxSteps := maxBasisSteps(g.NumParams(), lz.memory())

	// losses[j][i]: held-out row i's squared error at alpha 10^(j/2);
	// nil when the candidate's system could not be solved.
	var losses [][]float64
	mean := func(j int) float64 {
		if losses[j] == nil {
			return math.Inf(1)
		}
		if m := stat.Mean(losses[j], nil); !math.IsNaN(m) {
			return m
		}
		return math.Inf(1)
	}
	best := func() int {
		b := 0
		for j := range losses {
			if mean(j) < mean(b) {
				b = j
			}
		}
		return b
	}
	for len(losses) <= checkRaise {
		var shifts []framework.Shift
		var solved []int
		for j := len(losses); j < min(len(losses)+checkBatch, checkRaise+1); j++ {
			a := alpha * toFit * math.Pow(10, float64(j)/2)
			sol, ok, err := kr.solveEnergy(ctx, a, energyTol, maxSteps)
			if err != nil {
				return 0, 0, 0, fmt.Errorf("penalty check: %w", err)
			}
			if ok {
				shifts = append(shifts, framework.Shift{X: xHeld, DTheta: sol})
				solved = append(solved, j)
			}
		}
		batch := make([][]float64, min(checkBatch, checkRaise+1-len(losses)))
		if len(shifts) > 0 {
			preds, err := framework.PredictShifts(ctx, g, shifts)
			if err == nil && len(preds) != len(shifts) {
				err = fmt.Errorf("%d predictions for %d shifts", len(preds), len(shifts))
			}
			if err != nil {
				return 0, 0, 0, fmt.Errorf("penalty check: predict held-out rows: %w", err)
			}
			for c, pred := range preds {
				l, err := rowLosses(pred, tHeld, k)
				if err != nil {
					return 0, 0, 0, fmt.Errorf("penalty check: %w", err)
				}
				batch[solved[c]-len(losses)] = l
			}
		}
		losses = append(losses, batch...)
		// The walk ends once the best has two worse candidates above it.
		if len(losses)-1-best() >= 2 {
			break
		}
	}
	steps, flops := kr.steps(), krylovFlops(kr, op)

	none := make([]float64, len(held))
	for i := range none {
		v := eHeld[i*k : (i+1)*k]
		none[i] = floats.Dot(v, v)
	}
	b := best()
	candidate, raise := losses[b], float64(b)/2
	if stat.Mean(none, nil) < mean(b) {
		candidate, raise = none, math.Inf(1)
	}
	if raise == 0 || !worseBy(losses[0], candidate, checkZ) {
		stats[statRaised] = 0
		return alpha, steps, flops, nil
	}
	stats[statRaised] = raise
	return alpha * math.Pow(10, raise), steps, flops, nil
}

// rowLosses is each row's squared error, summed over its k outputs, of the
// predictions pred against targets (k per row).
func rowLosses(pred *mat.Dense, targets []float64, k int) ([]float64, error) {
	rows := len(targets) / k
	if r, c := pred.Dims(); r != rows || c != k {
		return nil, fmt.Errorf("backend returned %d x %d predictions for %d held-out rows, want %d x %d", r, c, rows, rows, k)
	}
	out := make([]float64, rows)
	for i := range out {
		for c := range k {
			d := targets[i*k+c] - pred.At(i, c)
			out[i] += d * d
		}
	}
	return out, nil
}

// worseBy reports whether the losses a (nil: not solved) exceed b on
// significantly more of the same rows than they fall below it: the sign
// test, more than n/2 + z sqrt(n)/2 of the n rows where they differ. The
// sign test rather than the paired differences' mean: a ruinous penalty's
// losses are heavy-tailed (on 150 held-out rows of random features, a
// penalty with 240 times the best one's evaluation error was within 2.2
// standard errors of it), and the check is there to catch a penalty that
// is worse on most rows, not to tune one that ties.
func worseBy(a, b []float64, z float64) bool {
	if a == nil {
		return true
	}
	worse, differ := 0, 0
	for i := range a {
		switch {
		case a[i] > b[i] || (math.IsNaN(a[i]) && !math.IsNaN(b[i])):
			worse++
			differ++
		case a[i] < b[i] || math.IsNaN(b[i]):
			differ++
		}
	}
	return float64(worse) > float64(differ)/2+z*math.Sqrt(float64(differ))/2
}
