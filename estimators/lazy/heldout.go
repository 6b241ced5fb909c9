package lazy

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"github.com/lazyvi/lazyvi/framework"
)

// The penalty at full size, on a held-out share of the train rows, for
// several outputs. The subsample's kernel has ns K rows for K outputs, so
// its rows are capped at maxRidgeDim / K: 300 for 10 classes, below the
// rows at which the subsample's penalty transfers to all the rows
// (config.subsampleRows). With so few samples against many parameters the
// subsample's cross-validation is in another regime than all the rows
// (far below the interpolation threshold, stacked rows n K against
// parameters M, where interpolating is harmless; all the rows near or
// above it, where a ridgeless fit's variance grows as M / (n - M)) and can
// pick a penalty that is ruinous on all the rows, making a feature that
// retrain and dropout put at 0 look important.
//
// So where the output count caps the subsample below min(n1,
// config.subsampleRows) rows, the penalty is chosen on all the train rows:
// the update is fitted on all but a seeded held-out share (the first of
// foldsOf's heldOutFolds, the same for every feature) for every candidate
// from one Krylov basis (the candidates are shifts of the same Krylov
// space, and the basis grows only as far as the smallest penalty asked for
// needs), each candidate's network is scored by its squared error on the
// held-out rows, and the search is the dense path's: from the top of the
// grid down for the baseline (searchLogAlpha), from the baseline's penalty
// for a feature (searchNear). The penalty found for the fitted rows is
// rescaled to all of them (alpha / n kept).
//
// With one output the subsample is kept: where all the rows are near or
// above the threshold too, the held-out search agrees with it at a few
// times its cost. So is it for a model without Jacobian products
// (framework.JacobianMultiplier) whose Jacobian of all the rows would
// exceed the memory bound.

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
// basis is longest, and where the first rise is that far above no update
// the error further down is far above it too; a bump before a dip, which
// the second point is there to see past, is a fraction of a percent (the
// random-features model of TestHeldOutAlpha).
const heldOutFlat = 0.05

// scaleRows is the number of seeded stacked rows (samples times outputs)
// whose kernel diagonal gives the search its scale: the kernel is formed
// whole to read its diagonal, (scaleRows)^2 entries, and a scale good to
// a few tenths of a decade is all the grid needs (the search refines).
// The scale is mean diag K, as on the dense path.
const scaleRows = 100

// heldOutSeedPerturb is the second word of the scale rows' PCG seed.
const heldOutSeedPerturb = 0x6e1d0a77

// heldOutAlpha chooses the penalty for all of p's rows on a held-out share
// of them, starting from near when it is positive (a penalty for these
// rows, the baseline's; +Inf: the top of the grid, nearStart), and returns
// it (+Inf: no update), the chosen candidate's update of the fitted rows
// (nil with no update; a start for the final solve on all of them), and
// the search's Krylov steps and counted flops; stats gains statSubsample,
// the rows the penalty was chosen on (all of them).
func (p *problem) heldOutAlpha(ctx context.Context, near float64) (alpha float64, w0 []float64, steps int, flops float64, err error) {
	g, k := p.g, p.k
	n1 := p.samples()
	folds := heldOutFolds
	if n1/folds < heldOutMinRows {
		folds = 3
	}
	held := foldsOf(n1, folds, p.seed)[0]
	fitRows := make([]int, 0, n1-len(held))
	for r := range n1 {
		if _, found := slices.BinarySearch(held, r); !found {
			fitRows = append(fitRows, r)
		}
	}
	fit, ho := p.subset(fitRows), p.subset(held)
	xHeld, tHeld, eHeld := ho.x, ho.targets, ho.e

	scale, err := p.kernelScale(ctx)
	if err != nil {
		return 0, nil, 0, 0, fmt.Errorf("penalty search: %w", err)
	}
	if !(scale > 0) {
		return math.Inf(1), nil, 0, 0, nil // no gradient signal: nothing to update
	}
	kr, op, err := fit.krylov(ctx)
	if err != nil {
		return 0, nil, 0, 0, fmt.Errorf("penalty search: %w", err)
	}
	maxSteps := maxBasisSteps(g.NumParams(), p.est.memory())
	// The penalty is unnormalised: the fitted rows' is all the rows'
	// scaled to them.
	toFit := float64(len(fitRows)) / float64(n1)
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
		best, bestErr, err = searchNear(heldErr, noUpdate, t0, p.est.cfg.tol(), true)
	} else {
		best, bestErr, err = searchLogAlpha(heldErr, noUpdate, p.est.cfg.tol(), heldOutFlat)
	}
	if err != nil {
		return 0, nil, 0, 0, fmt.Errorf("penalty search: %w", err)
	}
	p.stats[statSubsample] = float64(n1)
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

// kernelScale is mean diag K, the mean squared norm of a stacked row's
// gradient features, on scaleRows / k seeded rows of p: the unit of the
// penalty search's grid, as on the dense path.
func (p *problem) kernelScale(ctx context.Context) (float64, error) {
	n1 := p.samples()
	rows := rand.New(rand.NewPCG(uint64(p.seed), heldOutSeedPerturb)).Perm(n1)[:min(n1, max(1, scaleRows/p.k))]
	slices.Sort(rows)
	// Part of the search's step (heldOutAlpha's caller times it): not
	// timed again as a kernel.
	rp, err := p.subset(rows).newRidge(framework.WithStages(ctx, nil), nil, false)
	if err != nil {
		return 0, err
	}
	defer releaseRidge(rp)
	return rp.meanDiag(), nil
}
