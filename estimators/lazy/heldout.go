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

// The penalty at full size, on a held-out share of the train rows, for
// several outputs. The subsample's kernel has ns K rows for K outputs, so
// its rows are capped at maxRidgeDim / K: 300 for 10 classes, below the
// 1000 rows at which the subsample's penalty was found to transfer
// (subsampleRows; 500 rows already moved null features' VIs by 1-1.9
// standard errors). With so few samples against many parameters the
// subsample's cross-validation is in another regime than all the rows
// (far below the interpolation threshold, stacked rows n K against
// parameters M, where interpolating is harmless; all the rows near or
// above it, where a ridgeless fit's variance grows as M / (n - M)) and can
// pick a penalty that is ruinous on all the rows. Measured on digits.csv
// (hidden 100: 1198 train rows x 10 outputs against 7510 parameters): the
// 300-row subsample chose 0.02 for px_0_3, where the refit's accuracy is
// 0.60 instead of the full model's 0.97, and lazy reported a VI of 0.40
// for a pixel that retrain and dropout put at 0; a 700-row subsample chose
// 8-36 for the same pixels, and all the rows, as below, 28-96.
//
// So where the output count caps the subsample below min(n1,
// subsampleRows) rows, the penalty is chosen on all the train rows: the
// update is fitted on all but a seeded held-out share (the first of
// foldsOf's heldOutFolds, the same for every feature) for every candidate
// from one Krylov basis (the candidates are shifts of the same Krylov
// space, and the basis grows only as far as the smallest penalty asked for
// needs), each candidate's network is scored by its squared error on the
// held-out rows, and the search is the dense path's: from the top of the
// grid down for the baseline (searchLogAlpha), from the baseline's penalty
// for a feature (searchNear). The penalty found for the fitted rows is
// rescaled to all of them (alpha / n kept).
//
// With one output the subsample is kept: on vi bench linear --n 20000
// --width 200:100 and highdim --n 10000 --width 50 (all the rows near or
// above the threshold there too) the held-out search agreed with it
// (errors 0.0141 against 0.0147 vs the truth, 1.18 against 1.13 vs
// retrain) at 2-2.5 times lazy's cost. So is it for a model without
// Jacobian products (framework.JacobianMultiplier) whose Jacobian of all
// the rows would exceed the memory bound.

// heldOutFolds: a fifth of the train rows is held out (a third when a
// fifth would be fewer than heldOutMinRows), so that the rows fitted on
// (0.8 of them) are in the regime of all of them, and the held-out error
// is not too noisy to choose by.
const (
	heldOutFolds   = 5
	heldOutMinRows = 100
)

// heldOutFlat is the held-out search's bound of the flat part (see
// searchLogAlpha): a first rise below a best top of the grid whose error
// exceeds no update's by more than this fraction ends the grid's walk.
// The grid's next point, 4 decades below the top, is where the Krylov
// basis is longest: on digits.csv with the CNN (the baseline, whose
// search walks the grid, and every pixel's, since the baseline chooses no
// update) it took 58-84 steps of the 60-90 of a search, while the rise
// two decades below the top was already 11-49% above no update and the
// error four decades below 100-400 times it (docs/performance.md). A bump
// before a dip, which the second point is there to see past, was 0.3% on
// the random-features model of TestHeldOutAlpha.
const heldOutFlat = 0.05

// scaleRows is the number of seeded stacked rows (samples times outputs)
// whose kernel diagonal gives the search its scale: the kernel is formed
// whole to read its diagonal, (scaleRows)^2 entries, and a scale good to
// a few tenths of a decade is all the grid needs (the search refines).
// The scale is mean diag K, as on the dense path. 100 samples x 10
// outputs took 18% of lazy's time on digits.csv.
const scaleRows = 100

// heldOutSeedPerturb is the second word of the scale rows' PCG seed.
const heldOutSeedPerturb = 0x6e1d0a77

// heldOut reports whether the output count k caps the subsample of n1
// train rows below min(n1, subsampleRows), so that the penalty is chosen on
// all of them.
func heldOut(n1, k int) bool { return subsampleSize(n1, k) < min(n1, subsampleRows) }

// heldOutAlpha chooses the penalty for all the rows of x (targets and e
// stack k outputs per row) on a held-out share of them, starting from near
// when it is positive (a penalty for these rows, the baseline's; +Inf: the
// top of the grid, nearStart), and returns it (+Inf: no update), the
// chosen candidate's update of the fitted rows (nil with no update; a
// start for the final solve on all of them), and the search's Krylov steps
// and counted flops; stats gains statSubsample, the rows the penalty was
// chosen on (all of them).
func (lz Estimator) heldOutAlpha(ctx context.Context, g framework.Gradienter, x *mat.Dense, targets, e []float64, k int, seed int64, near float64, stats map[string]float64) (alpha float64, w0 []float64, steps int, flops float64, err error) {
	n1, _ := x.Dims()
	folds := heldOutFolds
	if n1/folds < heldOutMinRows {
		folds = 3
	}
	held := foldsOf(n1, folds, seed)[0]
	fit := make([]int, 0, n1-len(held))
	for r := range n1 {
		if _, found := slices.BinarySearch(held, r); !found {
			fit = append(fit, r)
		}
	}
	xFit, xHeld := rowsOf(x, fit), rowsOf(x, held)
	eFit, tHeld, eHeld := stackRows(e, fit, k), stackRows(targets, held, k), stackRows(e, held, k)

	scale, err := kernelScale(ctx, g, x, e, k, seed)
	if err != nil {
		return 0, nil, 0, 0, fmt.Errorf("penalty search: %w", err)
	}
	if !(scale > 0) {
		return math.Inf(1), nil, 0, 0, nil // no gradient signal: nothing to update
	}
	kr, op, err := matrixFreeKrylov(ctx, g, xFit, eFit, !lz.DoublePrecision)
	if err != nil {
		return 0, nil, 0, 0, fmt.Errorf("penalty search: %w", err)
	}
	maxSteps := maxBasisSteps(g.NumParams(), lz.memory())
	// The penalty is unnormalised: the fitted rows' is all the rows'
	// scaled to them.
	toFit := float64(len(fit)) / float64(n1)
	heldErr := func(ts []float64) ([]float64, error) {
		out := make([]float64, len(ts))
		var shifts []framework.Shift
		var solved []int
		for i, t := range ts {
			sol, ok, err := kr.solveEnergy(ctx, scale*math.Pow(10, t), energyTol, maxSteps)
			if err != nil {
				return nil, err
			}
			if !ok {
				out[i] = math.Inf(1)
				continue
			}
			shifts = append(shifts, framework.Shift{X: xHeld, DTheta: sol})
			solved = append(solved, i)
		}
		if len(shifts) == 0 {
			return out, nil
		}
		preds, err := framework.PredictShifts(ctx, g, shifts)
		if err == nil && len(preds) != len(shifts) {
			err = fmt.Errorf("%d predictions for %d shifts", len(preds), len(shifts))
		}
		if err != nil {
			return nil, fmt.Errorf("predict held-out rows: %w", err)
		}
		for c, pred := range preds {
			sse, err := sqError(pred, tHeld, k)
			if err != nil {
				return nil, fmt.Errorf("predict held-out rows: %w", err)
			}
			out[solved[c]] = sse / float64(len(tHeld))
			if math.IsNaN(out[solved[c]]) {
				out[solved[c]] = math.Inf(1)
			}
		}
		return out, nil
	}
	noUpdate := floats.Dot(eHeld, eHeld) / float64(len(eHeld))
	var best, bestErr float64
	if t0, ok := nearStart(near*toFit, scale); ok {
		best, bestErr, err = searchNear(heldErr, noUpdate, t0, subsampleSearchTol, true)
	} else {
		best, bestErr, err = searchLogAlpha(heldErr, noUpdate, subsampleSearchTol, heldOutFlat)
	}
	if err != nil {
		return 0, nil, 0, 0, fmt.Errorf("penalty search: %w", err)
	}
	stats[statSubsample] = float64(n1)
	if !(bestErr < noUpdate) || math.IsInf(best, 1) {
		return math.Inf(1), nil, kr.steps(), krylovFlops(kr, op), nil
	}
	// The chosen candidate's update of the fitted rows, from the basis
	// that already holds it: the final solve on all the rows starts there.
	w0, ok, err := kr.solveEnergy(ctx, scale*math.Pow(10, best), energyTol, maxSteps)
	if err != nil {
		return 0, nil, 0, 0, fmt.Errorf("penalty search: %w", err)
	}
	if !ok {
		w0 = nil
	}
	return scale * math.Pow(10, best) / toFit, w0, kr.steps(), krylovFlops(kr, op), nil
}

// stackRows is the rows' k entries each of v, in the rows' order.
func stackRows(v []float64, rows []int, k int) []float64 {
	out := make([]float64, 0, len(rows)*k)
	for _, r := range rows {
		out = append(out, v[r*k:(r+1)*k]...)
	}
	return out
}

// kernelScale is mean diag K, the mean squared norm of a stacked row's
// gradient features, on scaleRows / k seeded rows of x: the unit of the
// penalty search's grid, as on the dense path.
func kernelScale(ctx context.Context, g framework.Gradienter, x *mat.Dense, e []float64, k int, seed int64) (float64, error) {
	n1, _ := x.Dims()
	rows := rand.New(rand.NewPCG(uint64(seed), heldOutSeedPerturb)).Perm(n1)[:min(n1, max(1, scaleRows/k))]
	slices.Sort(rows)
	rp, err := newRidge(ctx, g, rowsOf(x, rows), stackRows(e, rows, k), k, nil)
	if err != nil {
		return 0, err
	}
	return rp.meanDiag(), nil
}
