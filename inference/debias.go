package inference

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
)

// extrapolate is the ensembled paired estimate of every estimator (outer)
// and feature (inner) extrapolated to infinitely many repetitions
// (InferOptions.Debias), and that extrapolation, VI_inf - VI_ens: its size
// is the bias bound of InferOptions.BiasAware, its sign the side
// InferOptions.DirectedBias widens.
//
// The loss of an average of M networks' predictions, each trained on other
// folds and seeds, exceeds that of the average of infinitely many by the
// networks' disagreement over M: for squared error exactly, E[(y - mean_m
// f_m)^2] = E[(y - f_inf)^2] + Var(f_m - f_inf)/M. A VI is a difference of
// two such losses, so it is affine in 1/M too, and with VI_1 the mean of
// the M single repetitions' estimates and VI_M the ensemble's, VI_inf =
// (M VI_M - VI_1)/(M - 1). The rows' influence values combine the same
// way, every repetition laid out as the ensemble (ensembleRows), so the
// standard error is that of the combination; the repetitions' spread
// (added by InferRepeated) counts the training's variability as for the
// ensemble.
func extrapolate(reps []*Reductions, m framework.Measure, opt InferOptions) ([]viSE, []float64, error) {
	rows := ensembleRows(reps[0])
	ens, err := average(reps, rows)
	if err != nil {
		return nil, nil, err
	}
	eVI, eIF, err := ens.pairedRows(m, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("ensemble: %w", err)
	}
	M := float64(len(reps))
	oneVI := make([]float64, len(eVI))
	oneIF := make([][]float64, len(eIF))
	for i, rep := range reps {
		one, err := average([]*Reductions{rep}, rows)
		if err != nil {
			return nil, nil, err
		}
		vi, inf, err := one.pairedRows(m, opt)
		if err != nil {
			return nil, nil, fmt.Errorf("ensemble, repetition %d: %w", i+1, err)
		}
		for k := range vi {
			oneVI[k] += vi[k] / M
			if i == 0 {
				oneIF[k] = make([]float64, len(inf[k]))
			}
			for j, v := range inf[k] {
				oneIF[k][j] += v / M
			}
		}
	}
	out := make([]viSE, len(eVI))
	bound := make([]float64, len(eVI))
	for k := range eVI {
		vi := (M*eVI[k] - oneVI[k]) / (M - 1)
		d := make([]float64, len(eIF[k]))
		for j := range d {
			d[j] = (M*eIF[k][j] - oneIF[k][j]) / (M - 1)
		}
		out[k] = viSE{vi, math.Sqrt(varOf(d) / float64(len(d)))}
		bound[k] = vi - eVI[k]
	}
	return out, bound, nil
}

// pairedRows is the paired estimate of every estimator (outer) and
// feature (inner) on a one-fold Reductions (the ensemble's layout), with
// its rows' influence values: IF_full(i) - IF_reduced(i), plus
// rho s eps_i for Perturbed inference. Their variance over n is the
// estimate's squared standard error.
func (r *Reductions) pairedRows(m framework.Measure, opt InferOptions) ([]float64, [][]float64, error) {
	if len(r.Folds) != 1 {
		return nil, nil, fmt.Errorf("paired rows: want one fold, have %d", len(r.Folds))
	}
	p := r.Folds[0]
	full, err := evalRows(m, p.YEval, p.FullEval, 0, len(p.YEval))
	if err != nil {
		return nil, nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
	}
	var vis []float64
	var ifs [][]float64
	for e, est := range r.Estimators {
		base, _, err := r.baseScores(m, []framework.Score{full}, e, opt.Inference)
		if err != nil {
			return nil, nil, fmt.Errorf("estimator %s: measure %s of its baseline: %w", est.Name(), m.Name(), err)
		}
		for f, feat := range r.Features {
			rs, err := scoreReduced(m, p, r.Reduced[0][e][f], 0, -1)
			if err != nil {
				return nil, nil, fmt.Errorf("estimator %s, feature %s: measure %s of the reduced model: %w", est.Name(), feat.Name, m.Name(), err)
			}
			d := diff(base[0].Influence, rs.Influence)
			vi := base[0].Value - rs.Value
			if opt.Inference == Perturbed {
				s := opt.Perturb * math.Sqrt(varOf(base[0].Influence))
				eps := r.noise(0, f, opt.Seed)
				for i := range d {
					d[i] += s * eps[i]
				}
				vi += s * stat.Mean(eps, nil)
			}
			vis = append(vis, vi)
			ifs = append(ifs, d)
		}
	}
	return vis, ifs, nil
}
