package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// Check asks Run to check the first estimator against a reference one
// (vi estimate --check K: retrain) on a few features: the K that the
// first estimator ranks highest on the first repetition (its paired
// estimate, ties in feature order), the choice the same whatever the
// worker count. The reference runs on them in every repetition and is
// inferred as the run's estimators are (Report.Check).
type Check struct {
	K         int
	Estimator framework.Estimator
}

// CheckReport is the reference estimator's results on the checked
// features, and how they agree with the first estimator's.
type CheckReport struct {
	// Estimator is the reference (retrain), Of the estimator it checks.
	Estimator string `json:"estimator"`
	Of        string `json:"of"`
	// Features are the checked ones, most important first by Of's first
	// repetition; Results the reference's results on them, in that order.
	Features []string           `json:"features"`
	Results  []inference.Result `json:"results"`
	// Inside counts the checked features whose reference VI lies inside
	// Of's interval; MaxDiff is the largest |VI - reference VI| and
	// MaxDiffSE the largest |VI - reference VI| / se (Of's se).
	Inside    int     `json:"inside"`
	MaxDiff   float64 `json:"max_diff"`
	MaxDiffSE float64 `json:"max_diff_se"`
}

// checkRun is a Check's state in Run: the chosen features and the
// reference's reductions of each repetition.
type checkRun struct {
	feats []framework.Feature
	reds  []*inference.Reductions
}

// checkStep reduces the checked features with the reference estimator
// on repetition rep's folds; on the first it chooses them from red, the
// repetition's reductions by the run's estimators.
func (s *runState) checkStep(ctx context.Context, rep int, folds []*framework.Problem, red *inference.Reductions, o EstimateOptions, label string) error {
	c := s.opt.Check
	if c.K <= 0 || c.Estimator == nil {
		return nil
	}
	if rep == 0 {
		feats, err := s.topFeatures(red, c.K)
		if err != nil {
			return err
		}
		s.check = &checkRun{feats: feats}
	}
	label = "check " + c.Estimator.Name() + " " + label
	r, err := reduceFolds(ctx, folds, s.m, []framework.Estimator{c.Estimator}, s.check.feats, o, label)
	if err != nil {
		return fmt.Errorf("--check: %w", err)
	}
	s.check.reds = append(s.check.reds, r)
	return nil
}

// topFeatures are the k features (all, if fewer) of largest VI by the
// first estimator on the reductions red.
func (s *runState) topFeatures(red *inference.Reductions, k int) ([]framework.Feature, error) {
	opt := inference.InferOptions{Inference: s.opt.Inference, Perturb: s.opt.Perturb, Seed: s.cfg.Seed}
	one := &inference.Reductions{Folds: red.Folds, Estimators: red.Estimators[:1], Features: red.Features,
		Reduced: make([][][]framework.Reduced, len(red.Reduced)), Seconds: red.Seconds}
	for f := range red.Reduced {
		one.Reduced[f] = red.Reduced[f][:1]
	}
	if len(red.Base) > 0 {
		one.Base = make([][]framework.Reduced, len(red.Base))
		for f := range red.Base {
			one.Base[f] = red.Base[f][:1]
		}
	}
	res, err := one.Infer(s.m, opt)
	if err != nil {
		return nil, fmt.Errorf("--check: ranking the features: %w", err)
	}
	idx := make([]int, len(res))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case res[a].VI > res[b].VI:
			return -1
		case res[a].VI < res[b].VI:
			return 1
		}
		return 0
	})
	k = min(k, len(idx))
	out := make([]framework.Feature, 0, k)
	for _, i := range idx[:k] {
		out = append(out, s.feats[i])
	}
	return out, nil
}

// checkReport infers the reference's results and compares them with the
// first estimator's in res.
func (s *runState) checkReport(res []inference.Result) (*CheckReport, error) {
	if s.check == nil {
		return nil, nil
	}
	ref, err := inference.InferRepeated(s.check.reds, s.m, s.opt.infer(s.cfg.Seed))
	if err != nil {
		return nil, fmt.Errorf("--check: %w", err)
	}
	of := s.ests[0].Name()
	cr := &CheckReport{Estimator: s.opt.Check.Estimator.Name(), Of: of, Results: ref}
	for _, f := range s.check.feats {
		cr.Features = append(cr.Features, f.Name)
	}
	for _, r := range ref {
		i := slices.IndexFunc(res, func(x inference.Result) bool { return x.Estimator == of && x.Feature == r.Feature })
		if i < 0 {
			continue
		}
		e := res[i]
		if r.VI >= e.CILow && r.VI <= e.CIHigh {
			cr.Inside++
		}
		d := math.Abs(e.VI - r.VI)
		cr.MaxDiff = max(cr.MaxDiff, d)
		if e.SE > 0 {
			cr.MaxDiffSE = max(cr.MaxDiffSE, d/e.SE)
		}
	}
	return cr, nil
}

// progress returns the progress callbacks of repetition rep's reductions
// by the run's estimators and of its check's (nil without
// EstimateOptions.Progress), counting over all repetitions, the check's
// reductions after the others' of the repetition.
func (s *runState) progress(rep int, folds []*framework.Problem) (main, check func(done, total int)) {
	p := s.opt.Progress
	if p == nil {
		return nil, nil
	}
	extra := 0
	if c := s.opt.Check; c.K > 0 && c.Estimator != nil {
		ropt := ReduceOptions{SplitOnly: s.opt.Inference == inference.Split && !s.opt.Ensemble, EstimatorBaselines: true}
		extra = len(newReducer(folds, []framework.Estimator{c.Estimator}, s.feats[:min(c.K, len(s.feats))], ropt).plan())
	}
	report := func(done, total int) { p(rep*total+done, s.reps*total) }
	var mainTotal atomic.Int64
	main = func(done, total int) {
		mainTotal.Store(int64(total))
		report(done, total+extra)
	}
	check = func(done, total int) {
		t := int(mainTotal.Load())
		report(t+done, t+total)
	}
	return main, check
}

// checkCounts refuses a shard count or a check of more features than the
// run has (features: its features or groups), before anything is trained.
func checkCounts(opt EstimateOptions, features int) error {
	if opt.Shard.Count > features {
		return framework.FieldErrorf("EstimateOptions.Shard", "%s: the run has %d features; use at most %d shards", opt.Shard, features, features)
	}
	if opt.Check.K > features {
		return framework.FieldErrorf("EstimateOptions.Check", "%d: the run has %d features; check at most %d (every feature's retraining is --estimators with retrain)", opt.Check.K, features, features)
	}
	return nil
}

// checkShard refuses a check of a shard: the features it checks are the
// whole run's most important.
func checkShard(opt EstimateOptions) error {
	if opt.Check.K > 0 && !opt.Shard.Whole() {
		return framework.FieldErrorf("EstimateOptions.Check", "checks the whole run's most important features: not with a Shard")
	}
	if opt.Check.K < 0 || opt.Check.K > 0 && opt.Check.Estimator == nil {
		return framework.FieldErrorf("EstimateOptions.Check", "wants K >= 0 and, with K > 0, an Estimator; got K %d", opt.Check.K)
	}
	return nil
}
