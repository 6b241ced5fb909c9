package inference

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lazyvi/lazyvi/framework"
)

// Inference says how the full and reduced models' scores on the evaluation
// data become a VI estimate and its standard error.
type Inference int

const (
	// Split is sample splitting (Williamson, Gilbert, Simon, Carone): the
	// full model is scored on one half A of the evaluation rows and the
	// reduced model on the other half B, VI = V_A(full) - V_B(reduced) and
	// se^2 = var_A(IF_full)/n_A + var_B(IF_reduced)/n_B, which keeps its
	// width under the null. It is the zero Inference, the default of the
	// library and of vi alike.
	Split Inference = iota
	// Plain is the paper's Wald interval: both models are scored on the
	// same evaluation rows, VI = V(full) - V(reduced) and
	// se = sd(IF_full - IF_reduced)/sqrt(n). Where a feature has no
	// importance the two models nearly coincide, se collapses towards 0 and
	// the interval under-covers.
	Plain
	// Perturbed is the paired estimate of Plain made non-degenerate under
	// the null by a seeded noise perturbation (Dai, Shen and Pan 2022's
	// one-split test; Rinaldo, Wasserman and G'Sell 2019): every evaluation
	// row i adds rho*s*eps_i to the paired difference IF_full(i) -
	// IF_reduced(i), eps_i ~ N(0, 1) and s = sd(IF_full) on the row's fold,
	// so that VI = V(full) - V(reduced) + rho*mean(s*eps) and se^2 =
	// (var(IF_full - IF_reduced) + rho^2 s^2)/n. Where the two models
	// coincide the noise keeps the interval's width and its coverage;
	// where they differ it adds little. rho is InferOptions.Perturb.
	Perturbed
)

// String returns "split", "plain" or "perturbed".
func (i Inference) String() string {
	switch i {
	case Plain:
		return "plain"
	case Split:
		return "split"
	case Perturbed:
		return "perturbed"
	}
	return fmt.Sprintf("Inference(%d)", int(i))
}

// ParseInference parses "split", "plain" or "perturbed".
func ParseInference(s string) (Inference, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "plain":
		return Plain, nil
	case "split":
		return Split, nil
	case "perturbed":
		return Perturbed, nil
	}
	return 0, &framework.ChoiceError{Setting: "inference", Value: s, Want: "split, plain or perturbed"}
}

// Adjust is a multiplicity adjustment of the p-values of one estimator's
// features.
type Adjust int

const (
	AdjustNone Adjust = iota // raw p-values
	AdjustHolm               // Holm's step-down (family-wise error)
	AdjustBH                 // Benjamini-Hochberg step-up (false discovery rate)
)

// String returns "none", "holm" or "bh".
func (a Adjust) String() string {
	switch a {
	case AdjustNone:
		return "none"
	case AdjustHolm:
		return "holm"
	case AdjustBH:
		return "bh"
	}
	return fmt.Sprintf("Adjust(%d)", int(a))
}

// ParseAdjust parses "none", "holm" or "bh".
func ParseAdjust(s string) (Adjust, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return AdjustNone, nil
	case "holm":
		return AdjustHolm, nil
	case "bh", "fdr", "benjamini-hochberg":
		return AdjustBH, nil
	}
	return 0, &framework.ChoiceError{Setting: "adjustment", Value: s, Want: "holm, bh or none"}
}

// OneSidedPValue is the p-value of H0: VI <= delta against VI > delta from
// the estimate vi ~ N(VI, se^2): 1 - Phi((vi - delta)/se). With se = 0 it is
// 0 when vi > delta and 1 otherwise.
func OneSidedPValue(vi, se, delta float64) float64 {
	if se == 0 {
		if vi > delta {
			return 0
		}
		return 1
	}
	return distuv.UnitNormal.Survival((vi - delta) / se)
}

// AdjustPValues returns the adjusted p-values of one family, in the order
// of p: Holm's max_{j<=i} min(1, (m-j+1) p_(j)) or Benjamini-Hochberg's
// min_{j>=i} min(1, m p_(j)/j) over the sorted p_(1) <= ... <= p_(m).
func AdjustPValues(p []float64, a Adjust) []float64 {
	m := len(p)
	out := make([]float64, m)
	copy(out, p)
	if a == AdjustNone || m == 0 {
		return out
	}
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return p[idx[i]] < p[idx[j]] })
	switch a {
	case AdjustHolm:
		run := 0.0
		for k, i := range idx {
			run = math.Max(run, math.Min(1, float64(m-k)*p[i]))
			out[i] = run
		}
	case AdjustBH:
		run := 1.0
		for k := m - 1; k >= 0; k-- {
			i := idx[k]
			run = math.Min(run, math.Min(1, float64(m)*p[i]/float64(k+1)))
			out[i] = run
		}
	}
	return out
}

// Reductions are the reduced models of a run: for every fold (one Problem
// for a single train/evaluation split, K for cross-fitting), estimator and
// feature, the reduced model's predictions on the fold's evaluation rows.
// Infer turns them into results; computing them once serves several
// inference settings (vi bench coverage compares plain and split on the
// same fits).
type Reductions struct {
	Folds      []*framework.Problem
	Estimators []framework.Estimator
	Features   []framework.Feature
	// Reduced[k][e][f] is fold k's reduction of feature f by estimator e;
	// its Pred is nil where it was not needed (see
	// pipeline.ReduceOptions.SplitOnly).
	Reduced [][][]framework.Reduced
	Seconds [][][]float64 // the estimator's wall time for each reduction
	// Base[k][e] is fold k's baseline of estimator e (Baseliner, with
	// pipeline.ReduceOptions.EstimatorBaselines); its Pred is nil where
	// there is none, and the estimator's reduced models are then scored
	// against the full model. BaseSeconds[k][e] is its wall time.
	Base        [][]framework.Reduced
	BaseSeconds [][]float64
}

// FoldScoresFull reports whether cross-fitting fold k (0-based) scores the
// full model under split inference; the other folds score the reduced one.
func FoldScoresFull(k int) bool { return k%2 == 0 }

// InferOptions tune Infer; the zero value is split inference, 95%
// intervals, delta 0, no adjustment, no truncation.
type InferOptions struct {
	Inference Inference
	Level     float64 // confidence level of the intervals; 0 means DefaultLevel
	// Delta is the null's bound: p_value tests H0: VI <= Delta.
	Delta float64
	// Adjust adjusts the p-values of each estimator's features as one
	// family into Result.PAdjusted.
	Adjust Adjust
	// CITruncate floors the interval at 0 (VI is non-negative), as vimp
	// does; the estimate itself is left as it is.
	CITruncate bool
	// Perturb is rho of Perturbed inference, the noise's sd in units of the
	// full model's influence sd; 0 means DefaultPerturb. Seed seeds the
	// noise: eps_i depends on the seed, the feature's name and the
	// row's index in the data set (Problem.EvalRows), so that repetitions
	// of a cross-fit (InferRepeated) share each row's noise.
	Perturb float64
	Seed    int64
	// Ensemble makes InferRepeated average each row's out-of-fold
	// predictions over the repetitions of a cross-fit (every model's:
	// full, baselines, reduced) and infer once from the averages, instead
	// of averaging the repetitions' estimates. An estimator whose reduced
	// predictions may not be averaged over models (framework.Ensembler:
	// permute) keeps the repetitions' estimates (Result.Combined). With one
	// repetition (Infer) there is nothing to average and it changes
	// nothing.
	Ensemble bool
	// Debias, with Ensemble and two or more repetitions of a cross-fit and
	// Plain or Perturbed inference, extrapolates the ensembled estimate to
	// an ensemble of infinitely many repetitions (Richardson in 1/M): the
	// part of a network's finite-sample error that varies from one
	// training to the next shrinks as 1/M in the ensemble's loss, so
	// VI_inf = (M VI_ens - mean_m VI_m)/(M - 1), each row's influence value
	// combined the same way, se^2 = var(IF_inf)/n + var_m(VI_m)/M.
	Debias bool
	// BiasAware, with Ensemble and two or more repetitions, widens the
	// interval by a bound on the estimate's remaining bias, B = |VI_ens -
	// mean_m VI_m|/(M - 1) (the size of Debias's correction): the interval
	// is VI +- (B + z se), and the p-value is the largest one over biases
	// within B, 1 - Phi((VI - B - delta)/se), so that the interval excludes
	// delta from below exactly when p < (1 - level)/2.
	BiasAware bool
	// DirectedBias, with BiasAware, widens only the side of the interval
	// the extrapolation came from: the lower end where it moved the
	// estimate down (the ensemble's estimate was biased up, and what is
	// left of its bias is taken to be up too), the upper end where it moved
	// it up. The p-value allows for the bound only where the lower end
	// does, so that interval and test still agree.
	DirectedBias bool
	// ScoreUpper, with Plain or Perturbed inference and a measure whose
	// paired estimate's variance grows with the VI
	// (framework.SignalVarianceReporter: mse, r2), takes the interval's upper end
	// from the standard error the estimate would have there: the largest
	// v that a test at the interval's level does not reject when the
	// variance is se^2 + c (v - VI), c that growth per unit of VI (for
	// mse, 4 sigma^2/n, sigma^2 the full model's error). The lower end
	// and the p-value stay those of se, so that the interval still
	// excludes delta from below exactly when p < (1 - level)/2.
	//
	// A network fitted to a sample in which a feature happens to relate
	// less to the response learns a smaller effect, and both the estimate
	// and its standard error come out small: the symmetric interval's
	// upper end then falls short of the truth far more often than its
	// lower end exceeds it. With other measures the interval is
	// symmetric.
	ScoreUpper bool
	// Test is where the p-values come from: the estimate's own Wald test
	// (TestEstimate, the zero value) or the covariance test
	// (TestCovariance, where it applies: TestFor).
	Test Test
}

// Check reports a level outside (0, 1) (0 means 0.95), a delta that is
// not finite or a perturbation that is negative or not finite (0 means
// DefaultPerturb).
func (o InferOptions) Check() error {
	if lv := o.Level; lv != 0 && !(lv > 0 && lv < 1) {
		return framework.FieldErrorf("InferOptions.Level", "must be in (0, 1), got %g", lv)
	}
	if math.IsNaN(o.Delta) || math.IsInf(o.Delta, 0) {
		return framework.FieldErrorf("InferOptions.Delta", "must be a finite number, got %g", o.Delta)
	}
	if !(o.Perturb >= 0 && o.Perturb <= MaxPerturb) {
		return framework.FieldErrorf("InferOptions.Perturb", "must be from 0 to %g (the noise's sd in units of the full model's influence sd: past a few it drowns every VI), got %g", float64(MaxPerturb), o.Perturb)
	}
	if o.DirectedBias && !o.BiasAware {
		return framework.FieldErrorf("InferOptions.DirectedBias", "directs BiasAware's bound: it needs BiasAware")
	}
	if o.ScoreUpper && o.Inference == Split {
		return framework.FieldErrorf("InferOptions.ScoreUpper", "needs the paired estimate (Plain or Perturbed inference), not split")
	}
	if (o.Debias || o.BiasAware) && o.Inference == Split {
		return framework.FieldErrorf("InferOptions.Debias", "and BiasAware need the paired estimate (Plain or Perturbed inference), not split")
	}
	return nil
}

// CheckScore reports a score whose value or influence variance (what the
// standard errors are made of) is not finite (ErrNonFinite).
func CheckScore(s framework.Score) error {
	if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
		return nonFinite("the score", s.Value)
	}
	if v := varOf(s.Influence); math.IsNaN(v) || math.IsInf(v, 0) {
		return nonFinite("the variance of the score's influence values", v)
	}
	return nil
}

// Infer turns the reductions into VI, standard error, interval and p-value
// per estimator and feature with the measure m, ordered by estimator, then
// feature.
//
// With one fold: Plain, Split and Perturbed as documented on Inference;
// Split's halves are the first ceil(n2/2) and the remaining evaluation rows
// (the rows are in a random order already).
//
// With K >= 2 folds (cross-fitting; Williamson, Gilbert, Simon, Carone
// 2023's cv_vim): each fold k has its own full and reduced models, trained
// on the other folds. Plain: VI = mean_k [V_k(full) - V_k(reduced)] and
// se^2 = mean_k var_k(IF_full - IF_reduced) / n. Perturbed: the same, plus
// rho*mean_{i in k}(s_k eps_i) in each fold's term and rho^2 s_k^2 in each
// fold's variance, s_k = sd_k(IF_full). Split: the folds are dealt
// alternately to the full model (folds 1, 3, ...) and to the reduced model
// (2, 4, ...); VI = mean_{k in F} V_k(full) - mean_{k in R} V_k(reduced) and
// se^2 = mean_{k in F} var_k(IF_full)/n_F + mean_{k in R} var_k(IF_reduced)/n_R,
// n_F and n_R the rows of each set of folds.
func (r *Reductions) Infer(m framework.Measure, opt InferOptions) ([]Result, error) {
	return InferRepeated([]*Reductions{r}, m, opt)
}

// RepeatSeed is the seed of repetition rep (0-based) of a run seeded with
// seed: seed itself for the first, so that one repetition is the
// unrepeated run.
func RepeatSeed(seed int64, rep int) int64 {
	if rep == 0 {
		return seed
	}
	return int64(uint64(seed) ^ uint64(rep)*0x9e3779b97f4a7c15)
}

// InferRepeated combines M repetitions of a run, each with its own seeded
// split or fold assignment and its own trained models, into one result per
// estimator and feature (repeated cross-fitting, Chernozhukov et al. 2018):
// VI = mean_m VI_m and se^2 = mean_m se_m^2 + var_m(VI_m)/M, the second
// term the variability of the training and of the fold assignment that
// each repetition's own standard error leaves out. With opt.Ensemble the
// estimate and the first term come instead from inference on the
// repetitions' averaged out-of-fold predictions (see average), and VI_m
// in the second term is repetition m's estimate with the ensemble's
// layout of the rows (the same halves for split inference). An estimator
// that declines the ensemble (framework.Ensembler: permute, whose
// repetitions permute differently, so that averaging their reduced
// predictions averages the permutations away) is combined from the
// repetitions' own estimates as without opt.Ensemble, neither debiased
// nor bias-aware, and its results say so (Result.Combined). One
// repetition is Infer. The repetitions must have the same estimators and
// features.
func InferRepeated(reps []*Reductions, m framework.Measure, opt InferOptions) ([]Result, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("infer: no reductions")
	}
	if err := opt.Check(); err != nil {
		return nil, err
	}
	level := opt.Level
	if level == 0 {
		level = DefaultLevel
	}
	if opt.Perturb == 0 {
		opt.Perturb = DefaultPerturb
	}
	c := &combination{reps: reps, m: m, opt: opt, z: distuv.UnitNormal.Quantile(0.5 + level/2)}
	if err := c.estimate(); err != nil {
		return nil, err
	}
	r0 := reps[0]
	results := make([]Result, 0, len(r0.Estimators)*len(r0.Features))
	for e := range r0.Estimators {
		res, err := c.results(e)
		if err != nil {
			return nil, err
		}
		results = append(results, res...)
	}
	return results, nil
}

// combination is InferRepeated's work: the repetitions' estimates, and
// the ensemble's where it applies, combined estimator by estimator.
type combination struct {
	reps []*Reductions
	m    framework.Measure
	opt  InferOptions
	z    float64 // the interval's normal quantile

	// est[m][e*nf+f] is repetition m's estimate (on the ensemble's layout
	// with an ensemble); own[m] the same on its own layout, kept for the
	// estimators that decline the ensemble; bases[m][e] its estimator's
	// baseline score (NaN without one).
	est, own [][]viSE
	bases    [][]float64
	// ens[e*nf+f] is the estimate from the repetitions' averaged
	// predictions (Ensemble), avg those predictions; corr the extrapolated
	// estimate (Debias) and bound the bias bound VI_inf - VI_ens
	// (BiasAware). All nil without an ensemble.
	ens   []viSE
	avg   *Reductions
	corr  []viSE
	bound []float64
}

// estimate fills every estimate but the combined ones.
func (c *combination) estimate() error {
	reps, r0 := c.reps, c.reps[0]
	ne, nf := len(r0.Estimators), len(r0.Features)
	c.est = make([][]viSE, len(reps))
	c.bases = make([][]float64, len(reps))
	for i, r := range reps {
		if len(r.Estimators) != ne || len(r.Features) != nf {
			return fmt.Errorf("infer: repetition %d has %d estimators and %d features, the first %d and %d", i+1, len(r.Estimators), len(r.Features), ne, nf)
		}
		e, b, err := r.estimates(c.m, c.opt)
		if err != nil {
			if len(reps) > 1 {
				err = fmt.Errorf("repetition %d: %w", i+1, err)
			}
			return err
		}
		c.est[i], c.bases[i] = e, b
	}
	c.own = slices.Clone(c.est)
	if c.opt.Ensemble && len(reps) > 1 {
		if err := c.ensemble(); err != nil {
			return err
		}
	}
	if (c.opt.Debias || c.opt.BiasAware) && c.ens == nil {
		return framework.FieldErrorf("InferOptions.Debias", "and BiasAware need the ensemble (Ensemble) of two or more repetitions")
	}
	if c.ens != nil && (c.opt.Debias || c.opt.BiasAware) {
		var err error
		if c.corr, c.bound, err = extrapolate(reps, c.m, c.opt); err != nil {
			return err
		}
	}
	return nil
}

// ensemble estimates from the repetitions' averaged predictions. The
// spread term then comes from each repetition's estimate on the
// ensemble's layout (its rows in the same order: the same halves for split
// inference, the same noise for perturbed), so that it holds the
// variability of the training and not that of each repetition's own split:
// est is replaced by those.
func (c *combination) ensemble() error {
	rows := ensembleRows(c.reps[0])
	r, err := average(c.reps, rows)
	if err != nil {
		return err
	}
	c.avg = r
	if c.ens, _, err = r.estimates(c.m, c.opt); err != nil {
		return fmt.Errorf("ensemble: %w", err)
	}
	for i, rep := range c.reps {
		one, err := average([]*Reductions{rep}, rows)
		if err != nil {
			return err
		}
		if c.est[i], _, err = one.estimates(c.m, c.opt); err != nil {
			return fmt.Errorf("ensemble, repetition %d: %w", i+1, err)
		}
	}
	return nil
}

// results are estimator e's results, one per feature, with their
// p-values adjusted as one family.
func (c *combination) results(e int) ([]Result, error) {
	r0, opt := c.reps[0], c.opt
	es := r0.Estimators[e]
	// pooled: this estimator's results come from the ensemble; one that
	// declines it is combined from own, as without it.
	en, isEnsembler := es.(framework.Ensembler)
	pooled := c.ens != nil && (!isEnsembler || en.Ensembles())
	per := c.est
	if c.ens != nil && !pooled {
		per = c.own
	}
	growthC := 0.0
	if opt.ScoreUpper {
		from := c.avg
		if !pooled {
			from = nil
		}
		var err error
		if growthC, err = growth(c.reps, from, c.m, e); err != nil {
			return nil, fmt.Errorf("estimator %s: %w", es.Name(), err)
		}
	}
	nf := len(r0.Features)
	results := make([]Result, 0, nf)
	vis := make([]float64, len(c.reps))
	for f, feat := range r0.Features {
		var vi, v2 float64
		for i := range c.reps {
			vis[i] = per[i][e*nf+f].vi
			vi += vis[i]
			v2 += per[i][e*nf+f].se * per[i][e*nf+f].se
		}
		M := float64(len(c.reps))
		vi, v2 = vi/M, v2/M
		if pooled {
			// The averaged predictions' estimate; the spread of the
			// repetitions' own estimates still stands for the
			// variability of the training below.
			vi, v2 = c.ens[e*nf+f].vi, c.ens[e*nf+f].se*c.ens[e*nf+f].se
			if c.corr != nil && opt.Debias {
				vi, v2 = c.corr[e*nf+f].vi, c.corr[e*nf+f].se*c.corr[e*nf+f].se
			}
		}
		v2 += varOf(vis) / M
		res := c.result(feat.Name, es.Name(), vi, math.Sqrt(v2), growthC, pooled, e*nf+f)
		if err := res.checkFinite(); err != nil {
			return nil, fmt.Errorf("estimator %s, feature %s: %w", es.Name(), feat.Name, err)
		}
		summarize(&res, c.reps, e, f)
		if b := meanOver(c.bases, e); !math.IsNaN(b) {
			res.Extra = append(res.Extra, framework.Field{Key: "baseline_score", Value: b})
		}
		results = append(results, res)
	}
	if cm, ok := es.(framework.ConditionalMean); ok && cm.ConditionalMean() && TestFor(opt, c.m) == TestCovariance {
		from := c.avg
		if !pooled {
			from = nil
		}
		ps, err := covarianceP(c.reps, from, c.m.(framework.Directional), e)
		if err != nil {
			return nil, fmt.Errorf("estimator %s: %w", es.Name(), err)
		}
		for f, p := range ps {
			results[f].PValue, results[f].Test = p, TestCovariance.String()
		}
	}
	if opt.Adjust != AdjustNone {
		ps := make([]float64, nf)
		for i := range ps {
			ps[i] = results[i].PValue
		}
		for i, a := range AdjustPValues(ps, opt.Adjust) {
			results[i].PAdjusted = &a
		}
	}
	return results, nil
}

// result is the result of estimate vi with standard error se: its
// interval (widened by the bias bound of index i where the estimator is
// pooled and the run bias-aware, its upper end by the score-upper growth
// growthC) and p-value.
func (c *combination) result(feature, estimator string, vi, se, growthC float64, pooled bool, i int) Result {
	opt := c.opt
	b, lo, hi := 0.0, 0.0, 0.0 // the bound, and how far it moves each end
	if pooled && c.bound != nil && opt.BiasAware {
		b = math.Abs(c.bound[i])
		lo, hi = b, b
		if opt.DirectedBias && c.bound[i] > 0 {
			lo = 0
		} else if opt.DirectedBias {
			hi = 0
		}
	}
	res := Result{Feature: feature, Estimator: estimator, VI: vi, SE: se,
		CILow: vi - lo - c.z*se, CIHigh: vi + hi + scoreUpper(c.z, se, growthC), PValue: OneSidedPValue(vi-lo, se, opt.Delta)}
	if b > 0 {
		res.BiasBound = b
	}
	if c.ens != nil && !pooled {
		res.Combined = CombinedRepetitions
	}
	if opt.CITruncate {
		res.CILow, res.CIHigh = math.Max(0, res.CILow), math.Max(0, res.CIHigh)
	}
	return res
}

// viSE is one estimate and its standard error.
type viSE struct{ vi, se float64 }

// meanOver is the mean of bases[m][e] over the repetitions m, NaN when a
// repetition has none.
func meanOver(bases [][]float64, e int) float64 {
	sum := 0.0
	for _, b := range bases {
		sum += b[e]
	}
	return sum / float64(len(bases))
}

// estimates are the VI and standard error of every estimator (outer) and
// feature (inner) of this repetition, as documented on Infer, and each
// estimator's baseline score (the mean over the folds that score it; NaN
// for an estimator without a baseline).
func (r *Reductions) estimates(m framework.Measure, opt InferOptions) ([]viSE, []float64, error) {
	K := len(r.Folds)
	if opt.Inference == Split {
		for _, p := range r.Folds {
			if n, _ := p.XEval.Dims(); K == 1 && n < MinSplitRows || n < 2 {
				return nil, nil, framework.Usagef("split inference needs at least %d evaluation rows (2 per half), have %d", MinSplitRows, n)
			}
		}
	}
	// The full model's scores, once per fold (on half A for split inference
	// with one fold; not at all on the folds that score the reduced model).
	full := make([]framework.Score, K)
	for k, p := range r.Folds {
		if opt.Inference == Split && K > 1 && !FoldScoresFull(k) {
			continue
		}
		lo, hi := r.fullRows(k, opt.Inference)
		s, err := evalRows(m, p.YEval, p.FullEval, lo, hi)
		if err != nil {
			return nil, nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
		}
		full[k] = s
	}
	out := make([]viSE, 0, len(r.Estimators)*len(r.Features))
	bases := make([]float64, len(r.Estimators))
	for e, est := range r.Estimators {
		base, bv, err := r.baseScores(m, full, e, opt.Inference)
		if err != nil {
			return nil, nil, fmt.Errorf("estimator %s: measure %s of its baseline: %w", est.Name(), m.Name(), err)
		}
		bases[e] = bv
		for f, feat := range r.Features {
			vi, se, err := r.infer1(m, base, e, f, opt)
			if err != nil {
				return nil, nil, fmt.Errorf("estimator %s, feature %s: measure %s of the reduced model: %w", est.Name(), feat.Name, m.Name(), err)
			}
			out = append(out, viSE{vi, se})
		}
	}
	return out, bases, nil
}

// baseScores are the scores estimator e's reduced models are compared
// with, fold by fold: its baseline's where it has one (Reductions.Base),
// else the full model's (full); and the mean of its baseline's scores over
// the folds that have one (NaN where none has).
func (r *Reductions) baseScores(m framework.Measure, full []framework.Score, e int, inf Inference) ([]framework.Score, float64, error) {
	out := slices.Clone(full)
	sum, n := 0.0, 0
	for k, p := range r.Folds {
		// The folds that score the reduced model under cross-fitted split
		// inference have no full-model score, and need no baseline.
		if k >= len(r.Base) || r.Base[k][e].Pred == nil || (inf == Split && len(r.Folds) > 1 && !FoldScoresFull(k)) {
			continue
		}
		lo, hi := r.fullRows(k, inf)
		s, err := evalRows(m, p.YEval, r.Base[k][e].Pred, lo, hi)
		if err != nil {
			if len(r.Folds) > 1 {
				err = fmt.Errorf("fold %d: %w", k+1, err)
			}
			return nil, 0, err
		}
		out[k] = s
		sum += s.Value
		n++
	}
	if n == 0 {
		return out, math.NaN(), nil
	}
	return out, sum / float64(n), nil
}

// fullRows are the evaluation rows [lo, hi) of fold k that score the full
// model: all of them, except half A (the first ceil(n/2) rows) for split
// inference with one fold.
func (r *Reductions) fullRows(k int, inf Inference) (lo, hi int) {
	n, _ := r.Folds[k].XEval.Dims()
	if inf == Split && len(r.Folds) == 1 {
		return 0, (n + 1) / 2
	}
	return 0, n
}

// infer1 is the estimate and standard error of estimator e's VI of feature
// f, as documented on Infer; full holds the full model's scores.
func (r *Reductions) infer1(m framework.Measure, full []framework.Score, e, f int, opt InferOptions) (vi, se float64, err error) {
	K, inf := len(r.Folds), opt.Inference
	switch {
	case K == 1 && inf == Split:
		_, lo := r.fullRows(0, Split)
		rs, err := scoreReduced(m, r.Folds[0], r.Reduced[0][e][f], lo, -1)
		if err != nil {
			return 0, 0, err
		}
		fs := full[0]
		return fs.Value - rs.Value, math.Sqrt(varOf(fs.Influence)/float64(len(fs.Influence)) + varOf(rs.Influence)/float64(len(rs.Influence))), nil
	case inf == Plain || inf == Perturbed:
		var sumVI, sumVar float64
		var n int
		for k, p := range r.Folds {
			rs, err := scoreReduced(m, p, r.Reduced[k][e][f], 0, -1)
			if err != nil {
				if K == 1 {
					return 0, 0, err
				}
				return 0, 0, fmt.Errorf("fold %d: %w", k+1, err)
			}
			d := diff(full[k].Influence, rs.Influence)
			sumVI += full[k].Value - rs.Value
			sumVar += varOf(d)
			if inf == Perturbed {
				s2 := varOf(full[k].Influence)
				sumVI += opt.Perturb * math.Sqrt(s2) * stat.Mean(r.noise(k, f, opt.Seed), nil)
				sumVar += opt.Perturb * opt.Perturb * s2
			}
			n += len(d)
		}
		return sumVI / float64(K), math.Sqrt(sumVar / float64(K) / float64(n)), nil
	}
	var fv, rv, fvar, rvar float64
	var nf, nr, kf, kr int
	for k, p := range r.Folds {
		if FoldScoresFull(k) {
			fv += full[k].Value
			fvar += varOf(full[k].Influence)
			nf += len(full[k].Influence)
			kf++
			continue
		}
		rs, err := scoreReduced(m, p, r.Reduced[k][e][f], 0, -1)
		if err != nil {
			return 0, 0, fmt.Errorf("fold %d: %w", k+1, err)
		}
		rv += rs.Value
		rvar += varOf(rs.Influence)
		nr += len(rs.Influence)
		kr++
	}
	vi = fv/float64(kf) - rv/float64(kr)
	se = math.Sqrt(fvar/float64(kf)/float64(nf) + rvar/float64(kr)/float64(nr))
	return vi, se, nil
}

// scoreReduced scores the reduced model on the fold's evaluation rows
// [lo, hi); hi < 0 means to the end.
func scoreReduced(m framework.Measure, p *framework.Problem, red framework.Reduced, lo, hi int) (framework.Score, error) {
	if red.Pred == nil {
		return framework.Score{}, fmt.Errorf("no reduced predictions (skipped for split inference)")
	}
	if hi < 0 {
		hi = len(p.YEval)
	}
	if len(red.Draws) == 0 {
		return evalRows(m, p.YEval, red.Pred, lo, hi)
	}
	// The mean of the measure over the draws, and each row's mean
	// influence: the influence of the mean.
	var out framework.Score
	preds := red.Predictions()
	for _, pred := range preds {
		s, err := evalRows(m, p.YEval, pred, lo, hi)
		if err != nil {
			return framework.Score{}, err
		}
		if out.Influence == nil {
			out.Influence = make([]float64, len(s.Influence))
		}
		if len(s.Influence) != len(out.Influence) {
			return framework.Score{}, fmt.Errorf("a draw's influences have %d rows, the first's %d", len(s.Influence), len(out.Influence))
		}
		out.Value += s.Value
		for i, v := range s.Influence {
			out.Influence[i] += v
		}
	}
	w := 1 / float64(len(preds))
	out.Value *= w
	for i := range out.Influence {
		out.Influence[i] *= w
	}
	return out, nil
}

// summarize sets the result's Seconds to the total over the folds of all
// repetitions and, when the estimator is a Summarizer, its Extra from the
// Stats of those folds' reductions (those computed: split inference skips
// some).
func summarize(res *Result, reps []*Reductions, e, f int) {
	var stats []map[string]float64
	for _, r := range reps {
		for k := range r.Folds {
			res.Seconds += r.Seconds[k][e][f]
			if k < len(r.BaseSeconds) {
				// The baselines' time, shared among the features.
				res.Seconds += r.BaseSeconds[k][e] / float64(len(r.Features))
			}
			if red := r.Reduced[k][e][f]; red.Pred != nil {
				stats = append(stats, red.Stats)
			}
		}
	}
	if s, ok := reps[0].Estimators[e].(framework.Summarizer); ok {
		res.Extra = s.Summarize(stats)
	}
}

// noise is the perturbation eps_i of feature f on the evaluation rows of
// fold k: standard normals drawn from a stream keyed by the seed, the
// feature's name (so that a shard of the features draws what the whole run
// does) and the row's index in the data set (its position among the folds'
// rows when the Problem does not say).
func (r *Reductions) noise(k, f int, seed int64) []float64 {
	p := r.Folds[k]
	n := len(p.YEval)
	offset := 0
	if len(p.EvalRows) != n {
		for _, q := range r.Folds[:k] {
			offset += len(q.YEval)
		}
	}
	h := fnv.New64a()
	h.Write([]byte(r.Features[f].Name))
	key := uint64(seed) ^ h.Sum64()
	eps := make([]float64, n)
	for i := range eps {
		row := offset + i
		if len(p.EvalRows) == n {
			row = p.EvalRows[i]
		}
		eps[i] = rand.New(rand.NewPCG(key, uint64(row))).NormFloat64()
	}
	return eps
}

// evalRows scores rows [lo, hi) of the predictions.
func evalRows(m framework.Measure, y []float64, pred *mat.Dense, lo, hi int) (framework.Score, error) {
	if pred == nil {
		return framework.Score{}, fmt.Errorf("no predictions")
	}
	if lo == 0 && hi == len(y) {
		return m.Evaluate(y, pred)
	}
	_, c := pred.Dims()
	return m.Evaluate(y[lo:hi], pred.Slice(lo, hi, 0, c))
}

func diff(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range d {
		d[i] = a[i] - b[i]
	}
	return d
}

// varOf is the sample variance (divisor n-1), 0 for fewer than two values.
func varOf(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	return stat.Variance(x, nil)
}

// nonFinite is the ErrNonFinite error for what (a measure, a VI), which is v.
func nonFinite(what string, v float64) error {
	return fmt.Errorf("%s is %g: %w (extreme values in the data, or a model that diverged)", what, v, framework.ErrNonFinite)
}

// MinSplitRows is the fewest evaluation rows that split inference with one
// train/evaluation split can use: 2 per half.
const MinSplitRows = 4

// The defaults of inference: a zero field of InferOptions (or
// pipeline.EstimateOptions) means the default below.
const (
	// DefaultLevel is the confidence level of the intervals
	// (InferOptions.Level).
	DefaultLevel = 0.95
	// DefaultInference is sample splitting, the zero Inference.
	DefaultInference = Split
	// DefaultPerturb is Perturbed inference's rho when InferOptions.Perturb
	// is 0: the noise's sd is half the full model's influence sd. It
	// matters only when Perturbed is asked for; the choice comes from a
	// coverage study on the MLP (see docs/inference.md).
	DefaultPerturb = 0.5
	// MaxPerturb is the largest Perturb: noise a hundred times the
	// influence's sd leaves no power, and far larger overflows.
	MaxPerturb = 100
)
