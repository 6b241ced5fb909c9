package shapley

import (
	"context"
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
)

// Rule is a stopping rule of the sampling: it says how small each value's
// subset-sampling standard error must be.
type Rule int

const (
	// RuleRange stops when the largest sampling SE is at most 0.025 times
	// the range of the values (max psi - min psi), SAGE's rule. It is the
	// zero value and DefaultRule.
	RuleRange Rule = iota
	// RuleInference stops when every value's sampling SE is at most half
	// its influence SE, so that sampling adds at most 12% to the total SE
	// (sqrt(1 + 0.5^2) = 1.118).
	RuleInference
	// RuleTypical stops when every value's sampling SE is at most half the
	// larger of its influence SE and the median influence SE of all
	// values: RuleInference, with the typical influence SE standing in
	// for the (nearly) zero one of a null feature, where RuleInference
	// never stops. Without any influence SE (a noiseless game) it is
	// RuleRange.
	RuleTypical
)

// DefaultRule is the rule of vi shapley: on the study's games (see
// docs/shapley.md) RuleInference never stopped (a null feature's influence
// SE is zero), RuleTypical needed 3.5 times the subsets of RuleRange at
// p = 20 and more than 16384 at p = 50, and RuleRange's sampling SEs
// covered at their nominal rate.
const DefaultRule = RuleRange

// Thresholds of the rules.
const (
	InferenceRatio = 0.5
	RangeRatio     = 0.025
)

// String names the rule's figure as the output does: "se_sampling/range",
// "se_sampling/se_influence" or "se_sampling/max(se_influence,median)".
func (r Rule) String() string {
	switch r {
	case RuleRange:
		return "se_sampling/range"
	case RuleTypical:
		return "se_sampling/max(se_influence,median)"
	}
	return "se_sampling/se_influence"
}

// Threshold is the rule's bound on its figure.
func (r Rule) Threshold() float64 {
	if r == RuleRange {
		return RangeRatio
	}
	return InferenceRatio
}

// Figure is the rule's stopping figure: max_j seS_j / seIF_j (RuleInference),
// max_j seS_j / (max psi - min psi) (RuleRange) or max_j seS_j /
// max(seIF_j, median_k seIF_k) (RuleTypical); the sampling is
// negligible when it is at most Threshold. A zero sampling SE counts as 0
// whatever its denominator; a positive one over a zero denominator (a zero
// range, a zero influence SE) makes the figure +Inf: such a run stops at its
// cap and is not converged.
func (r Rule) Figure(psi, seIF, seS []float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range psi {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if r == RuleTypical {
		med := stat.Quantile(0.5, stat.Empirical, sortedCopy(seIF), nil)
		if !(med > 0) {
			// RuleRange, in units of this rule's threshold.
			return RuleRange.Figure(psi, seIF, seS) * InferenceRatio / RangeRatio
		}
		return typicalFigure(seIF, seS, med)
	}
	fig := 0.0
	for j, s := range seS {
		if s == 0 {
			continue
		}
		var den float64
		switch r {
		case RuleRange:
			den = hi - lo
		case RuleInference:
			den = seIF[j]
		}
		if !(den > 0) {
			return math.Inf(1)
		}
		fig = math.Max(fig, s/den)
	}
	return fig
}

// typicalFigure is RuleTypical's figure: max_j seS_j / max(seIF_j, med).
func typicalFigure(seIF, seS []float64, med float64) float64 {
	fig := 0.0
	for j, s := range seS {
		fig = math.Max(fig, s/math.Max(seIF[j], med))
	}
	return fig
}

func sortedCopy(x []float64) []float64 {
	out := slices.Clone(x)
	slices.Sort(out)
	return out
}

// Stop tunes the sampling of a non-exact design.
type Stop struct {
	Rule Rule
	// MaxSubsets caps the distinct subsets (reduced models), enumerated
	// ones included; 0 means DefaultMaxSubsets.
	MaxSubsets int
	// Subsets, when positive, fixes the number of distinct subsets instead
	// of stopping by the rule (the figure is still reported).
	Subsets int
}

// budget is the most distinct subsets the sampling may fit.
func (s Stop) budget() int {
	if s.Subsets > 0 {
		return s.Subsets
	}
	if s.MaxSubsets > 0 {
		return s.MaxSubsets
	}
	return DefaultMaxSubsets
}

// scorer scores the reduced models of the plan's subsets [from, to) with
// the measure; progress receives (done, to-from) as they finish.
type scorer func(ctx context.Context, subs []Subset, progress func(done, total int)) ([]framework.Score, error)

// outcome is the state of the sampling when it stopped.
type outcome struct {
	game      Game
	fit       *Fit
	scores    []framework.Score
	seIF, seS []float64
	figure    float64
	converged bool
}

// converge scores the plan's subsets and, for a sampled design, draws
// batches of pairs until the design's rule holds (after at least
// MinPairs(p) pairs), its budget is spent or, with Stop.Subsets, the fixed
// number is reached; it returns the values with both parts of their
// standard errors. progress receives (done, forecast) over distinct
// subsets, the forecast the subsets fitted plus those the figure says are
// still needed (N f^2 / t^2
// pairs in all, SAGE's forecast), at most the budget.
//
// With grow false it fits the plan's subsets as they are and draws none:
// the figure and converged then describe those subsets.
func converge(ctx context.Context, pl *Plan, score scorer, empty, full framework.Score, grow bool, progress func(done, total int)) (*outcome, error) {
	d := pl.Design
	stop := d.Stop
	p := d.P
	budget := stop.budget()
	sm := &sampling{pl: pl, score: score, empty: empty, full: full, progress: progress, o: &outcome{}, forecast: len(pl.Subsets)}
	o := sm.o
	switch {
	case !grow:
	case stop.Subsets > 0:
		sm.forecast = budget
	case !d.Exact:
		sm.forecast = min(budget, len(pl.Subsets)+2*MinPairs(p))
	}
	if progress != nil {
		progress(0, sm.forecast)
	}
	if err := sm.scoreNew(ctx); err != nil {
		return nil, err
	}
	if d.Exact {
		if err := sm.solve(); err != nil {
			return nil, err
		}
		o.converged = true
		return o, nil
	}
	maxPairs := 64 * budget // a guard: drawn again, subsets add pairs but no models
	exhausted := false
	t := stop.Rule.Threshold()
	check := MinPairs(p) // pairs at the next check of the rule
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		canDraw := grow && !exhausted && len(pl.Subsets) < budget && len(pl.Pairs) < maxPairs
		if (stop.Subsets == 0 && len(pl.Pairs) >= check) || !canDraw {
			switch err := sm.solve(); {
			case errors.Is(err, ErrNotIdentified) && canDraw:
			case errors.Is(err, ErrNotIdentified):
				return nil, framework.Usagef("%w: %d subsets (%d sampled pairs) for %d features; allow more subsets",
					err, len(pl.Subsets), len(pl.Pairs), p)
			case err != nil:
				return nil, err
			default:
				o.converged = o.figure <= t && len(pl.Pairs) >= MinPairs(p)
				if o.converged && stop.Subsets == 0 || !canDraw {
					if progress != nil {
						progress(len(pl.Subsets), len(pl.Subsets)) // done
					}
					return o, nil
				}
				if stop.Subsets == 0 {
					check = sm.reforecast(t, budget)
				}
			}
		}
		if pl.Draw(budget) == 0 {
			exhausted = true
			continue
		}
		if err := sm.scoreNew(ctx); err != nil {
			return nil, err
		}
	}
}

// sampling is converge's state: the plan, how its subsets are scored, the
// outcome so far and the forecast of distinct subsets that progress
// reports.
type sampling struct {
	pl          *Plan
	score       scorer
	empty, full framework.Score
	progress    func(done, total int)
	o           *outcome
	forecast    int
}

// scoreNew scores the plan's subsets not yet scored.
func (sm *sampling) scoreNew(ctx context.Context) error {
	pl, o := sm.pl, sm.o
	from := len(o.scores)
	if from == len(pl.Subsets) {
		return nil
	}
	sm.forecast = max(sm.forecast, len(pl.Subsets))
	f := sm.forecast
	prog := func(done, _ int) {
		if sm.progress != nil {
			sm.progress(from+done, f)
		}
	}
	s, err := sm.score(ctx, pl.Subsets[from:], prog)
	if err != nil {
		return err
	}
	o.scores = append(o.scores, s...)
	return nil
}

// solve fits the values to the subsets scored, with both parts of their
// standard errors and the rule's figure.
func (sm *sampling) solve() error {
	pl, o, d := sm.pl, sm.o, sm.pl.Design
	vals := make([]float64, len(o.scores))
	for k, s := range o.scores {
		vals[k] = s.Value
	}
	o.game = Game{P: d.P, Subsets: pl.Subsets, Weights: pl.Weights(), Values: vals, Empty: sm.empty.Value, Full: sm.full.Value}
	fit, err := Solve(o.game)
	if err != nil {
		return err
	}
	o.fit = fit
	o.seIF = influenceSE(fit, o.scores, sm.full, sm.empty)
	o.seS = PairSamplingSE(o.game, fit, pl.Pairs, d.Mass)
	o.figure = d.Stop.Rule.Figure(fit.Psi, o.seIF, o.seS)
	return nil
}

// reforecast updates the forecast from the figure against the threshold
// t, within the budget, and returns the number of pairs at which to check
// the rule again. The sampling SE falls as 1/sqrt(pairs): N (f/t)^2 pairs
// in all, two subsets each.
func (sm *sampling) reforecast(t float64, budget int) int {
	pl := sm.pl
	n := float64(len(pl.Pairs))
	need := n * (math.Pow(sm.o.figure/t, 2) - 1) // more pairs
	if math.IsNaN(need) {
		need = math.Inf(1)
	}
	sm.forecast = budget
	if 2*need < float64(budget) {
		sm.forecast = min(budget, len(pl.Subsets)+int(math.Ceil(2*need)))
	}
	if sm.progress != nil {
		sm.progress(len(pl.Subsets), sm.forecast)
	}
	// Check again half-way to the forecast, after one batch at least and
	// at most as many pairs as there are.
	return len(pl.Pairs) + int(math.Max(BatchPairs, math.Min(need/2, n)))
}
