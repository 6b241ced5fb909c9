package shapley

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// Result is one feature's Shapley value by one estimator: an
// inference.Result (VI is the Shapley value, SE its standard error, PValue
// the one-sided p-value of H0: psi <= 0 against psi > 0, PAdjusted it
// adjusted over the estimator's features; Seconds is the estimator's wall
// time over all subsets divided by p) plus the two parts of the variance,
// SE^2 = SEInfluence^2 + SESampling^2, and Lambda, lazy's fixed penalty (nil
// when chosen per subset by cross-validation, and for other estimators).
// Its JSON form is the inference.Result's followed by "se_influence",
// "se_sampling" and, when set, "lambda".
type Result struct {
	inference.Result
	SEInfluence float64
	SESampling  float64
	Lambda      *float64
}

// Options tune Estimate.
type Options struct {
	Workers int     // concurrent reduced models; 0 means runtime.NumCPU()
	Level   float64 // confidence level; 0 means inference.DefaultLevel
	// Progress, when set, receives (done, forecast) over reduced models:
	// the forecast is those fitted plus those the stopping rule says are
	// still needed, and may change as the sampling goes.
	Progress func(done, total int)
	Adjust   inference.Adjust // multiplicity adjustment into Result.PAdjusted
	// NoSampling fits the plan's subsets as they are, drawing none: a
	// later estimator on the subsets an earlier one chose.
	NoSampling bool
	// Checkpoint, when set, supplies the subsets' reduced models an
	// earlier run finished and keeps each new one (see
	// pipeline.Checkpoint).
	Checkpoint pipeline.Checkpoint
}

// Estimation is the outcome of Estimate for one reduced-model estimator.
type Estimation struct {
	Estimator string // "shapley-" + the reduced-model estimator's name
	Results   []Result
	Full      framework.Score // V of the full model on the evaluation split
	// Grand is the grand coalition's value, the values' sum plus Empty's:
	// Full, or with Baselined the reduced estimator's baseline
	// (framework.Baseliner: lazy's refit of the full model).
	Grand     framework.Score
	Baselined bool
	Empty     framework.Score // V of the intercept-only model
	Values    []float64       // V of each plan subset's reduced model
	Seconds   float64         // wall time of the reduced models and the fit
	NoUpdate  int             // subsets where lazy kept the full model
	Subsets   int             // distinct subsets (reduced models) fitted
	Pairs     int             // complement pairs sampled
	// Converged says the stopping rule held (always for an exact design);
	// Figure is the rule's figure (0 when exact; see Rule.Figure).
	Converged bool
	Figure    float64
}

// Estimate estimates the Shapley values of the players feats (features or
// groups of columns) with red's reduced models: it fits and scores the
// reduced model of every subset the plan holds, draws more pairs from the
// plan's design until its Stop says the sampling error is negligible (see
// converge), and solves for the values with standard errors, p-values and
// intervals. Workers fit reduced models at a time; the result does not
// depend on their number. The plan grows in place (unless opt.NoSampling),
// so a later estimator can reuse its subsets. The intercept-only model predicts the
// train split's mean response; the full model is prob.Full.
func Estimate(ctx context.Context, prob *framework.Problem, m framework.Measure, feats []framework.Feature, plan *Plan, red framework.Estimator, opt Options) (*Estimation, error) {
	if !m.Supports(prob.Task) {
		return nil, framework.Usagef("measure %q does not fit a %s response", m.Name(), prob.Task)
	}
	p := len(feats)
	if plan.Design.P != p {
		return nil, fmt.Errorf("shapley: plan for %d players, have %d", plan.Design.P, p)
	}
	level := opt.Level
	if level == 0 {
		level = inference.DefaultLevel
	}
	if !(level > 0 && level < 1) {
		return nil, &framework.FieldError{Field: "shapley.Options.Level", Msg: fmt.Sprintf("must be in (0, 1), got %g", level)}
	}
	z := distuv.UnitNormal.Quantile(0.5 + level/2)
	start := time.Now()
	full, err := m.Evaluate(prob.YEval, prob.FullEval)
	if err != nil {
		return nil, fmt.Errorf("measure %s of the full model: %w", m.Name(), err)
	}
	grand, baselined := full, false
	if _, ok := red.(framework.Baseliner); ok {
		// The grand coalition's value is the reduced estimator's own
		// model with every player in (lazy's refit of the full model),
		// as every other coalition's is: see framework.Baseliner. It goes
		// through pipeline.Reduce for its checks, panic recovery and
		// checkpoint.
		rs, err := pipeline.Reduce(ctx, []*framework.Problem{prob}, []framework.Estimator{red}, nil,
			pipeline.ReduceOptions{Workers: 1, Checkpoint: opt.Checkpoint, EstimatorBaselines: true})
		if err != nil {
			return nil, err
		}
		if grand, err = m.Evaluate(prob.YEval, rs.Base[0][0].Pred); err != nil {
			return nil, fmt.Errorf("measure %s of estimator %s's baseline: %w", m.Name(), red.Name(), err)
		}
		baselined = true
	}
	empty, err := m.Evaluate(prob.YEval, InterceptOnly(prob))
	if err != nil {
		return nil, fmt.Errorf("measure %s of the intercept-only model: %w", m.Name(), err)
	}
	noUpdate := 0
	score := func(ctx context.Context, subs []Subset, progress func(done, total int)) ([]framework.Score, error) {
		s, n, err := reduceAll(ctx, prob, m, feats, subs, red, pipeline.ReduceOptions{Workers: opt.Workers, Progress: progress, Checkpoint: opt.Checkpoint})
		noUpdate += n
		return s, err
	}
	o, err := converge(ctx, plan, score, empty, grand, !opt.NoSampling, opt.Progress)
	if err != nil {
		return nil, err
	}
	est := &Estimation{Estimator: "shapley-" + red.Name(), Full: full, Empty: empty, NoUpdate: noUpdate,
		Grand: grand, Baselined: baselined,
		Values: o.game.Values, Subsets: len(plan.Subsets), Pairs: len(plan.Pairs),
		Converged: o.converged, Figure: o.figure}
	est.Seconds = time.Since(start).Seconds()
	ps := make([]float64, p)
	for j := range p {
		se := math.Hypot(o.seIF[j], o.seS[j])
		v := o.fit.Psi[j]
		ps[j] = inference.OneSidedPValue(v, se, 0)
		r := Result{Result: inference.Result{Feature: feats[j].Name, Estimator: est.Estimator, VI: v, SE: se,
			CILow: v - z*se, CIHigh: v + z*se, PValue: ps[j], Seconds: est.Seconds / float64(p)},
			SEInfluence: o.seIF[j], SESampling: o.seS[j]}
		if fp, ok := red.(fixedPenalty); ok {
			if l, ok := fp.FixedPenalty(); ok {
				r.Lambda = &l
			}
		}
		est.Results = append(est.Results, r)
	}
	if opt.Adjust != inference.AdjustNone {
		for j, a := range inference.AdjustPValues(ps, opt.Adjust) {
			est.Results[j].PAdjusted = &a
		}
	}
	return est, nil
}

// fixedPenalty is the optional interface of a reduced-model estimator
// whose ridge penalty may be fixed for every subset (lazy.Estimator with
// Lambda > 0): the results then report it as "lambda".
type fixedPenalty interface {
	FixedPenalty() (lambda float64, ok bool)
}

// FixedPenalty is the penalty that one of the reduced-model estimators
// fixes for every subset (lazy's Lambda), for a report's header; 0 when
// none does.
func FixedPenalty(reds []framework.Estimator) float64 {
	for _, e := range reds {
		if fp, ok := e.(fixedPenalty); ok {
			if l, ok := fp.FixedPenalty(); ok {
				return l
			}
		}
	}
	return 0
}

// keptFull reports whether the estimator's summary of the reduction says
// that it kept the full model ("no_update": true, as lazy says when no
// update was best).
func keptFull(e framework.Estimator, r framework.Reduced) bool {
	s, ok := e.(framework.Summarizer)
	if !ok {
		return false
	}
	for _, f := range s.Summarize([]map[string]float64{r.Stats}) {
		if f.Key == "no_update" && f.Value == true {
			return true
		}
	}
	return false
}

// InterceptOnly returns the intercept-only model's predictions on the
// evaluation split: the train split's mean response in every row, the
// reduced model on the empty subset.
func InterceptOnly(prob *framework.Problem) *mat.Dense {
	n2, _ := prob.XEval.Dims()
	pred := mat.NewDense(n2, 1, nil)
	mean := stat.Mean(prob.YTrain, nil)
	for i := range n2 {
		pred.Set(i, 0, mean)
	}
	return pred
}

// influenceSE returns, per feature, sd_i(IF_psi_j(Z_i)) / sqrt(n2) with
// IF_psi_j = sum_k dpsi_j/dv_k IF_k + dpsi_j/dv_full IF_full +
// dpsi_j/dv_empty IF_empty: the delta method through the (linear) least
// squares, every V's influence function on the same evaluation samples
// (one matrix product, coefficients times influence functions).
func influenceSE(fit *Fit, scores []framework.Score, full, empty framework.Score) []float64 {
	p := len(fit.Psi)
	n := len(full.Influence)
	k := len(scores) + 2
	coef := mat.NewDense(p, k, nil)
	inf := mat.NewDense(k, n, nil)
	coef.SetCol(0, fit.CoefFull)
	coef.SetCol(1, fit.CoefEmpty)
	inf.SetRow(0, full.Influence)
	inf.SetRow(1, empty.Influence)
	for s, sc := range scores {
		coef.SetCol(s+2, fit.CoefSubset[s])
		inf.SetRow(s+2, sc.Influence)
	}
	var ifPsi mat.Dense
	ifPsi.Mul(coef, inf)
	out := make([]float64, p)
	for j := range p {
		out[j] = stat.StdDev(ifPsi.RawRowView(j), nil) / math.Sqrt(float64(n))
	}
	return out
}

// reduceAll scores the reduced model of every subset of players, results
// by subset. A subset keeps its players' columns: pipeline.Reduce drops the
// columns of the others (running them as ropt says: its workers at a time,
// with its progress and checkpoint, panic recovery and shape checks). It
// also counts the subsets where lazy kept the full model.
func reduceAll(ctx context.Context, prob *framework.Problem, m framework.Measure, players []framework.Feature, subs []Subset,
	red framework.Estimator, ropt pipeline.ReduceOptions) ([]framework.Score, int, error) {
	feats := make([]framework.Feature, len(subs))
	for k, s := range subs {
		var cols []int
		for _, j := range s.Complement(len(players)) {
			cols = append(cols, players[j].Columns...)
		}
		slices.Sort(cols)
		feats[k] = framework.Feature{Name: "subset " + s.String(), Columns: slices.Compact(cols)}
	}
	rs, err := pipeline.Reduce(ctx, []*framework.Problem{prob}, []framework.Estimator{red}, feats, ropt)
	if err != nil {
		return nil, 0, err
	}
	scores := make([]framework.Score, len(feats))
	noUpdate := 0
	for k, r := range rs.Reduced[0][0] {
		if scores[k], err = m.Evaluate(prob.YEval, r.Pred); err != nil {
			return nil, 0, fmt.Errorf("estimator %s, %s: measure %s: %w", red.Name(), feats[k].Name, m.Name(), err)
		}
		if keptFull(red, r) {
			noUpdate++
		}
	}
	return scores, noUpdate, nil
}
