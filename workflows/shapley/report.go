package shapley

import (
	"context"
	"math"
	"time"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// Report is the outcome of Run; its JSON form is `vi shapley --format
// json`: the contract of `vi estimate` (measure, backend, task, n, n_train,
// n_eval, seed, level, adjust, full, results) with estimator
// "shapley-<reduced>", plus empty.score (the intercept-only model's measure
// on the evaluation split), the subset design and a summary per estimator
// (with whether its sampling converged).
type Report struct {
	pipeline.RunInfo
	Adjust     string              `json:"adjust"`
	Full       pipeline.FullResult `json:"full"`
	Empty      EmptyResult         `json:"empty"`
	Subsets    SubsetInfo          `json:"subsets"`
	Estimators []Summary           `json:"estimators"`
	Results    []Result            `json:"results"`
}

// EmptyResult is the intercept-only model's score on the evaluation split.
type EmptyResult struct {
	Score float64 `json:"score"`
}

// SubsetInfo describes the design: Exact enumeration of all 2^p - 2
// subsets, or the Enumerated subsets of the sizes Sizes plus sampled
// complement pairs, stopped by Rule at Threshold (or at a fixed number of
// subsets, Fixed) within MaxSubsets.
type SubsetInfo struct {
	Players    int     `json:"players"`
	Exact      bool    `json:"exact"`
	Enumerated int     `json:"enumerated"`
	Sizes      []int   `json:"enumerated_sizes"`
	Rule       string  `json:"rule,omitempty"`
	Threshold  float64 `json:"threshold,omitempty"`
	MaxSubsets int     `json:"max_subsets,omitempty"`
	Fixed      int     `json:"fixed,omitempty"`
}

// Summary is one estimator's totals: wall time over all subsets, the sum of
// its values (= full.score - empty.score, the efficiency constraint), the
// distinct subsets it fitted and the pairs sampled, whether the stopping
// rule held (Converged; always for an exact design) and the rule's figure
// (null when it is infinite: a positive sampling SE over a zero
// denominator), and for lazy how many subsets kept the full model.
type Summary struct {
	Estimator string   `json:"estimator"`
	Seconds   float64  `json:"seconds"`
	Sum       float64  `json:"sum"`
	Subsets   int      `json:"subsets"`
	Pairs     int      `json:"pairs"`
	Converged bool     `json:"converged"`
	Figure    *float64 `json:"figure"`
	NoUpdate  int      `json:"no_update,omitempty"`
	// Grand is the grand coalition's value when it is not the full model's
	// score but the reduced estimator's baseline (lazy's refit of the full
	// model, framework.Baseliner): the values sum to Grand - empty.score.
	Grand *float64 `json:"grand,omitempty"`
}

// RunOptions tune Run.
type RunOptions struct {
	Options
	Stop  Stop // when the sampling stops
	Exact bool // enumerate every subset
}

// Run prepares the problem (split, standardisation, the full model trained
// once), resolves the players (the features, or the groups of
// cfg.Groups and cfg.OneHot, as pipeline.Run does) and estimates their
// Shapley values with each reduced-model estimator in turn on one plan
// drawn from the run's seed: the first estimator's stopping rule decides
// the subsets, and the later ones are fitted on the same subsets (each
// reports its own figure and whether it converged on them).
// Results are ordered by estimator, then player. A nil measure means the
// task's default.
func Run(ctx context.Context, d *dataio.Dataset, cfg pipeline.Config, m framework.Measure, reds []framework.Estimator, opt RunOptions) (*Report, error) {
	if len(reds) == 0 {
		return nil, framework.Usagef("no reduced-model estimator")
	}
	if d != nil && d.X != nil {
		// Fail on bad groups or a bad design before the full model trains.
		feats, err := Players(d, cfg)
		if err != nil {
			return nil, err
		}
		if _, err := NewDesign(len(feats), opt.Stop, opt.Exact, cfg.Seed); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	cfg.MinTrain = max(cfg.MinTrain, pipeline.MinTrainFor(reds))
	prob, err := pipeline.Prepare(ctx, d, cfg)
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
	feats, err := dataio.ResolveUnits(prob.FeatureNames, d.Units(), target(d, cfg), cfg.Groups, cfg.OneHot)
	if err != nil {
		return nil, err
	}
	design, err := NewDesign(len(feats), opt.Stop, opt.Exact, prob.Seed)
	if err != nil {
		return nil, err
	}
	plan := NewPlan(design)
	level := opt.Level
	if level == 0 {
		level = inference.DefaultLevel
	}
	info := SubsetInfo{Players: len(feats), Exact: design.Exact, Enumerated: len(design.Enumerated), Sizes: design.Sizes}
	if info.Sizes == nil {
		info.Sizes = []int{}
	}
	if !design.Exact {
		info.Rule, info.Threshold = opt.Stop.Rule.String(), opt.Stop.Rule.Threshold()
		info.MaxSubsets, info.Fixed = opt.Stop.budget(), opt.Stop.Subsets
		if info.Fixed > 0 {
			info.MaxSubsets = 0
		}
	}
	rep := &Report{RunInfo: pipeline.RunInfoOf(prob, m, level), Adjust: opt.Adjust.String(), Subsets: info}
	for i, red := range reds {
		eopt := opt.Options
		eopt.NoSampling = i > 0
		est, err := Estimate(ctx, prob, m, feats, plan, red, eopt)
		if err != nil {
			return nil, err
		}
		rep.Full = pipeline.FullResult{Score: est.Full.Value, Seconds: fullSecs}
		rep.Empty = EmptyResult{Score: est.Empty.Value}
		sum := 0.0
		for _, r := range est.Results {
			sum += r.VI
		}
		s := Summary{Estimator: est.Estimator, Seconds: est.Seconds, Sum: sum, Subsets: est.Subsets, Pairs: est.Pairs,
			Converged: est.Converged, NoUpdate: est.NoUpdate}
		if est.Baselined {
			g := est.Grand.Value
			s.Grand = &g
		}
		if !math.IsInf(est.Figure, 0) && !math.IsNaN(est.Figure) {
			f := est.Figure
			s.Figure = &f
		}
		rep.Estimators = append(rep.Estimators, s)
		rep.Results = append(rep.Results, est.Results...)
	}
	return rep, nil
}

// Players returns the players of a Shapley estimate on d: one per feature
// column, or the groups of cfg.Groups (and cfg.OneHot) with the columns in
// no group alone (dataio.ResolveUnits). Column indices are those of
// the design matrix, d's columns without the response.
func Players(d *dataio.Dataset, cfg pipeline.Config) ([]framework.Feature, error) {
	t := target(d, cfg)
	names := make([]string, 0, len(d.Names))
	for _, n := range d.Names {
		if n != t {
			names = append(names, n)
		}
	}
	return dataio.ResolveUnits(names, d.Units(), t, cfg.Groups, cfg.OneHot)
}

// target is the response's column name: cfg.Target, or d's last column.
func target(d *dataio.Dataset, cfg pipeline.Config) string {
	if cfg.Target != "" {
		return cfg.Target
	}
	if d != nil && len(d.Names) > 0 {
		return d.Names[len(d.Names)-1]
	}
	return ""
}
