package shapley

import (
	"context"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// Report is the outcome of Run; its JSON form is `vi shapley --format
// json`: the contract of `vi estimate` (measure, backend, task, n, n_train,
// n_eval, seed, level, full, results) with estimator "shapley-<reduced>",
// plus empty.score (the intercept-only model's measure on the evaluation
// split), the subset plan and a summary per estimator.
type Report struct {
	framework.RunInfo
	Full       framework.FullResult `json:"full"`
	Empty      EmptyResult          `json:"empty"`
	Subsets    SubsetInfo           `json:"subsets"`
	Estimators []Summary            `json:"estimators"`
	Results    []Result             `json:"results"`
}

// EmptyResult is the intercept-only model's score on the evaluation split.
type EmptyResult struct {
	Score float64 `json:"score"`
}

// SubsetInfo describes the plan: Draws i.i.d. draws from the Shapley kernel
// giving Distinct subsets, or Exact enumeration of all 2^p - 2.
type SubsetInfo struct {
	Draws    int  `json:"draws"`
	Distinct int  `json:"distinct"`
	Exact    bool `json:"exact"`
}

// Summary is one estimator's totals: wall time over all subsets, the sum of
// its values (= full.score - empty.score, the efficiency constraint) and,
// for lazy, how many subsets kept the full model (no update).
type Summary struct {
	Estimator string  `json:"estimator"`
	Seconds   float64 `json:"seconds"`
	Sum       float64 `json:"sum"`
	NoUpdate  int     `json:"no_update,omitempty"`
}

// RunOptions tune Run.
type RunOptions struct {
	Options
	Subsets int  // draws; 0 means DefaultSubsets(p)
	Exact   bool // enumerate every subset
}

// Run prepares the problem (split, standardisation, the full model trained
// once), draws the subset plan from the run's seed and estimates the Shapley
// values with each reduced-model estimator in turn, on the same subsets.
// Results are ordered by estimator, then feature. A nil measure means the
// task's default.
func Run(ctx context.Context, d *framework.Dataset, cfg framework.Config, m framework.Measure, reds []framework.Estimator, opt RunOptions) (*Report, error) {
	if len(reds) == 0 {
		return nil, framework.Usagef("no reduced-model estimator")
	}
	if d != nil && d.X != nil {
		// Fail on a bad plan before the full model trains.
		_, cols := d.X.Dims()
		if _, err := NewPlan(cols-1, opt.Subsets, opt.Exact, cfg.Seed); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	cfg.MinTrain = max(cfg.MinTrain, framework.MinTrainFor(reds))
	prob, err := framework.Prepare(ctx, d, cfg)
	if err != nil {
		return nil, err
	}
	if prob.Task == framework.Multiclass {
		prob.Close()
		return nil, framework.Usagef("shapley: a multiclass response is not supported (its intercept-only model and fixed-penalty lazy path are for one output)")
	}
	defer prob.Close()
	fullSecs := time.Since(start).Seconds()
	if m == nil {
		if m, err = framework.LookupMeasure(framework.DefaultMeasure(prob.Task)); err != nil {
			return nil, err
		}
	}
	plan, err := NewPlan(len(prob.FeatureNames), opt.Subsets, opt.Exact, prob.Seed)
	if err != nil {
		return nil, err
	}
	level := opt.Level
	if level == 0 {
		level = framework.DefaultLevel
	}
	rep := &Report{
		RunInfo: prob.Info(m, level),
		Subsets: SubsetInfo{Draws: plan.Draws, Distinct: len(plan.Subsets), Exact: plan.Exact},
	}
	for _, red := range reds {
		est, err := Estimate(ctx, prob, m, plan, red, opt.Options)
		if err != nil {
			return nil, err
		}
		rep.Full = framework.FullResult{Score: est.Full.Value, Seconds: fullSecs}
		rep.Empty = EmptyResult{Score: est.Empty.Value}
		sum := 0.0
		for _, r := range est.Results {
			sum += r.VI
		}
		rep.Estimators = append(rep.Estimators, Summary{Estimator: est.Estimator, Seconds: est.Seconds, Sum: sum, NoUpdate: est.NoUpdate})
		rep.Results = append(rep.Results, est.Results...)
	}
	return rep, nil
}
