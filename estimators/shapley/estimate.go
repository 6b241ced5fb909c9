package shapley

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lazyvi/lazyvi/framework"
)

// sampleStream is the second PCG word of the subset sampler; the run's seed
// is the first.
const sampleStream = 0x5a4b1e75ba3d1e01

// Plan is the set of subsets whose reduced models a Shapley estimate needs:
// either Draws i.i.d. draws from the Shapley kernel distribution
// (deduplicated, with counts) or, when Exact, every subset with its kernel
// weight. A plan is shared by every reduced-model estimator of a run, so
// that lazy and retrain see the same subsets.
type Plan struct {
	P       int
	Exact   bool
	Draws   int      // number of draws (0 when Exact)
	Subsets []Subset // distinct subsets, 0 < |S| < p
	Counts  []int    // draws per subset (nil when Exact)
	Weights []float64
}

// NewPlan samples draws subsets (0: DefaultSubsets(p)) with the seed, or
// enumerates all of them when exact is true or when there are no more
// distinct subsets (2^p - 2) than draws: then the values are exact for the
// estimated V and carry no sampling variance.
func NewPlan(p, draws int, exact bool, seed int64) (*Plan, error) {
	if p < 2 {
		return nil, framework.Usagef("shapley values need at least 2 features, got %d", p)
	}
	if draws < 0 {
		return nil, &framework.FieldError{Field: "shapley.RunOptions.Subsets", Msg: fmt.Sprintf("must be >= 0 (0: DefaultSubsets), got %d", draws)}
	}
	if draws == 0 {
		draws = DefaultSubsets(p)
	}
	if !exact && p <= MaxExactFeatures && (1<<p)-2 <= draws {
		exact = true
	}
	if exact {
		if p > MaxExactFeatures {
			return nil, framework.Usagef("exact Shapley values need 2^p - 2 reduced models; %d features are too many (at most %d; sample with --subsets instead)", p, MaxExactFeatures)
		}
		subs, err := Enumerate(p)
		if err != nil {
			return nil, err
		}
		w := make([]float64, len(subs))
		for k, s := range subs {
			w[k] = KernelWeight(p, len(s))
		}
		return &Plan{P: p, Exact: true, Subsets: subs, Weights: w}, nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), sampleStream))
	ds, err := Sample(rng, p, draws)
	if err != nil {
		return nil, err
	}
	pl := &Plan{P: p, Draws: draws}
	for _, d := range ds {
		pl.Subsets = append(pl.Subsets, d.Subset)
		pl.Counts = append(pl.Counts, d.Count)
		pl.Weights = append(pl.Weights, float64(d.Count)/float64(draws))
	}
	// Whether the values are identified depends on the subsets alone: check
	// before any model is fitted.
	if _, err := Solve(Game{P: p, Subsets: pl.Subsets, Weights: pl.Weights, Values: make([]float64, len(pl.Subsets))}); errors.Is(err, ErrNotIdentified) {
		return nil, framework.Usagef("%w: %d draws gave %d distinct subsets for %d features; use more --subsets (default %d)",
			err, draws, len(pl.Subsets), p, DefaultSubsets(p))
	}
	return pl, nil
}

// Result is one feature's Shapley value by one estimator, with the fields
// of framework.Result that apply (VI is the Shapley value, SE its standard
// error) plus the two parts of the variance, SE^2 = SEInfluence^2 +
// SESampling^2. Seconds is the estimator's wall time over all subsets
// divided by p; Lambda is lazy's fixed penalty (nil when chosen per subset by
// cross-validation, and for other estimators).
type Result struct {
	Feature     string   `json:"feature"`
	Estimator   string   `json:"estimator"`
	VI          float64  `json:"vi"`
	SE          float64  `json:"se"`
	CILow       float64  `json:"ci_low"`
	CIHigh      float64  `json:"ci_high"`
	Seconds     float64  `json:"seconds"`
	SEInfluence float64  `json:"se_influence"`
	SESampling  float64  `json:"se_sampling"`
	Lambda      *float64 `json:"lambda,omitempty"`
}

// Options tune Estimate.
type Options struct {
	Workers  int     // concurrent reduced models; 0 means runtime.NumCPU()
	Level    float64 // confidence level; 0 means framework.DefaultLevel
	Progress func(done, total int)
	// Checkpoint, when set, supplies the subsets' reduced models an
	// earlier run finished and keeps each new one (see
	// framework.Checkpoint).
	Checkpoint framework.Checkpoint
}

// Estimation is the outcome of Estimate for one reduced-model estimator.
type Estimation struct {
	Estimator string // "shapley-" + the reduced-model estimator's name
	Results   []Result
	Full      framework.Score // V of the full model on the evaluation split
	Empty     framework.Score // V of the intercept-only model
	Values    []float64       // V of each plan subset's reduced model
	Seconds   float64         // wall time of the reduced models and the fit
	NoUpdate  int             // subsets where lazy kept the full model
}

// Estimate fits red's reduced model on every subset of the plan (Workers at
// a time; the result does not depend on the number of workers), scores each
// with m on the evaluation split and solves for the Shapley values with
// standard errors. The intercept-only model predicts the train split's mean
// response; the full model is prob.Full.
func Estimate(ctx context.Context, prob *framework.Problem, m framework.Measure, plan *Plan, red framework.Estimator, opt Options) (*Estimation, error) {
	if !m.Supports(prob.Task) {
		return nil, framework.Usagef("measure %q does not fit a %s response", m.Name(), prob.Task)
	}
	p := len(prob.FeatureNames)
	if plan.P != p {
		return nil, fmt.Errorf("shapley: plan for %d features, problem has %d", plan.P, p)
	}
	level := opt.Level
	if level == 0 {
		level = framework.DefaultLevel
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
	empty, err := m.Evaluate(prob.YEval, InterceptOnly(prob))
	if err != nil {
		return nil, fmt.Errorf("measure %s of the intercept-only model: %w", m.Name(), err)
	}
	scores, noUpdate, err := reduceAll(ctx, prob, m, plan, red, opt)
	if err != nil {
		return nil, err
	}
	est := &Estimation{Estimator: "shapley-" + red.Name(), Full: full, Empty: empty, NoUpdate: noUpdate}
	est.Values = make([]float64, len(scores))
	for k, s := range scores {
		est.Values[k] = s.Value
	}
	g := Game{P: p, Subsets: plan.Subsets, Weights: plan.Weights, Values: est.Values, Empty: empty.Value, Full: full.Value}
	fit, err := Solve(g)
	if err != nil {
		if errors.Is(err, ErrNotIdentified) {
			return nil, framework.Usagef("%w: %d draws gave %d distinct subsets; use more --subsets", err, plan.Draws, len(plan.Subsets))
		}
		return nil, err
	}
	seIF := influenceSE(fit, scores, full, empty)
	seS := make([]float64, p)
	if !plan.Exact {
		zeta := SamplingInfluence(g, fit, plan.Counts)
		col := make([]float64, len(zeta))
		// The residuals of zeta are in-sample: scale by Gamma/(Gamma-(p-1))
		// as HC1 does for a regression with p-1 free coefficients.
		n := float64(len(zeta))
		hc1 := 1.0
		if df := n - float64(p-1); df > 0 {
			hc1 = n / df
		}
		for j := range p {
			for d, v := range zeta {
				col[d] = v[j]
			}
			seS[j] = math.Sqrt(hc1 * stat.Variance(col, nil) / n)
		}
	}
	est.Seconds = time.Since(start).Seconds()
	for j := range p {
		se := math.Hypot(seIF[j], seS[j])
		v := fit.Psi[j]
		r := Result{Feature: prob.FeatureNames[j], Estimator: est.Estimator, VI: v, SE: se,
			CILow: v - z*se, CIHigh: v + z*se, Seconds: est.Seconds / float64(p),
			SEInfluence: seIF[j], SESampling: seS[j]}
		if fp, ok := red.(fixedPenalty); ok {
			if l, ok := fp.FixedPenalty(); ok {
				r.Lambda = &l
			}
		}
		est.Results = append(est.Results, r)
	}
	return est, nil
}

// fixedPenalty is the optional interface of a reduced-model estimator
// whose ridge penalty may be fixed for every subset (estimators.Lazy with
// Lambda > 0): the results then report it as "lambda".
type fixedPenalty interface {
	FixedPenalty() (lambda float64, ok bool)
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
// squares, every V's influence function on the same evaluation samples.
func influenceSE(fit *Fit, scores []framework.Score, full, empty framework.Score) []float64 {
	p := len(fit.Psi)
	n := len(full.Influence)
	inf := make([]float64, n)
	out := make([]float64, p)
	for j := range p {
		for i := range n {
			inf[i] = fit.CoefFull[j]*full.Influence[i] + fit.CoefEmpty[j]*empty.Influence[i]
		}
		for k, s := range scores {
			c := fit.CoefSubset[k][j]
			if c == 0 {
				continue
			}
			for i, v := range s.Influence {
				inf[i] += c * v
			}
		}
		out[j] = stat.StdDev(inf, nil) / math.Sqrt(float64(n))
	}
	return out
}

// reduceAll scores the reduced model of every plan subset, results by
// subset index. The subsets are features to framework.Reduce (each drops
// the complement of its subset), which runs them Workers at a time with its
// checkpoint, panic recovery and shape checks.
func reduceAll(ctx context.Context, prob *framework.Problem, m framework.Measure, plan *Plan, red framework.Estimator, opt Options) ([]framework.Score, int, error) {
	feats := make([]framework.Feature, len(plan.Subsets))
	for k, s := range plan.Subsets {
		feats[k] = framework.Feature{Name: "subset " + s.String(), Columns: s.Complement(plan.P)}
	}
	rs, err := framework.Reduce(ctx, []*framework.Problem{prob}, []framework.Estimator{red}, feats,
		framework.ReduceOptions{Workers: opt.Workers, Progress: opt.Progress, Checkpoint: opt.Checkpoint})
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
