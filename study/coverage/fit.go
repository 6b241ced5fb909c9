package coverage

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// fitter fits one repetition's models and infers every candidate.
type fitter struct {
	be       framework.Backend
	opts     map[string]string
	crossfit int
	repeats  int
	ests     []framework.Estimator
	cands    []candidate
	// With rivals, the full model's kind is chosen against them on the
	// first cross-fit, as vi estimate chooses it, and every model of the
	// repetition is of the chosen kind; candidates are the backend's
	// architectures to choose among.
	candidates []pipeline.Candidate
	rivals     []pipeline.Baseline
}

// repOut is one repetition's results per candidate, its truth, measure
// and the kind of its full model.
type repOut struct {
	res     [][]inference.Result
	truth   []float64
	measure string
	kind    string
}

// rep draws the repetition's data, fits the single split and the repeats
// cross-fits (seeded as vi estimate --seed seed would; with rivals, the
// first cross-fit chooses the kind of every model) and infers under each
// candidate.
func (c fitter) rep(ctx context.Context, draw drawFunc, seed int64) (repOut, error) {
	d, truth, measure, err := draw(seed)
	if err != nil {
		return repOut{}, err
	}
	m, err := framework.LookupMeasure(measure)
	if err != nil {
		return repOut{}, err
	}
	var task *framework.Task
	if measure == "mse" {
		t := framework.Regression
		task = &t
	}
	reduce := func(folds []*framework.Problem) (*inference.Reductions, error) {
		defer func() {
			for _, p := range folds {
				p.Close()
			}
		}()
		return pipeline.Reduce(ctx, folds, c.ests, folds[0].Features(), pipeline.ReduceOptions{Workers: 1, EstimatorBaselines: true})
	}
	cfg := pipeline.Config{Backend: c.be, BackendName: "mlp", Options: c.opts, Seed: seed, Task: task,
		MinTrain: pipeline.MinTrainFor(c.ests), Candidates: c.candidates, Rivals: c.rivals}
	reps := make([]*inference.Reductions, c.repeats)
	cf := cfg
	cf.CrossFit, cf.Seed = c.crossfit, inference.RepeatSeed(seed, 0)
	folds, chosen, _, err := pipeline.PrepareChosen(ctx, d, cf, 1)
	if err != nil {
		return repOut{}, fmt.Errorf("cross-fit 1: %w", err)
	}
	if reps[0], err = reduce(folds); err != nil {
		return repOut{}, fmt.Errorf("cross-fit 1: %w", err)
	}
	cfg.Backend, cfg.BackendName, cfg.Options = chosen.Backend, chosen.BackendName, chosen.Options
	cfg.Candidates, cfg.Rivals = chosen.Candidates, nil
	for k := 1; k < len(reps); k++ {
		cf := cfg
		cf.CrossFit, cf.Seed = c.crossfit, inference.RepeatSeed(seed, k)
		if folds, err = pipeline.PrepareFolds(ctx, d, cf, cf.CrossFit, 1); err == nil {
			reps[k], err = reduce(folds)
		}
		if err != nil {
			return repOut{}, fmt.Errorf("cross-fit %d: %w", k+1, err)
		}
	}
	p, err := pipeline.Prepare(ctx, d, cfg)
	if err != nil {
		return repOut{}, err
	}
	single, err := reduce([]*framework.Problem{p})
	if err != nil {
		return repOut{}, err
	}
	out, err := c.infer(single, reps, m, seed)
	return repOut{res: out, truth: truth, measure: measure, kind: cfg.BackendName}, err
}

// infer is every candidate's results from the single split's and the
// cross-fits' reductions.
func (c fitter) infer(single *inference.Reductions, reps []*inference.Reductions, m framework.Measure, seed int64) ([][]inference.Result, error) {
	out := make([][]inference.Result, len(c.cands))
	var err error
	for i, cand := range c.cands {
		o := cand.Opt
		o.Seed = seed
		switch cand.Scheme {
		case singleSplit:
			out[i], err = single.Infer(m, o)
		case crossFit:
			out[i], err = reps[0].Infer(m, o)
		case repeated:
			out[i], err = inference.InferRepeated(reps, m, o)
		case repeatedWithin:
			out[i], err = inferWithin(reps, m, o)
		case ensembled:
			o.Ensemble = true
			out[i], err = inference.InferRepeated(reps, m, o)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cand.Name, err)
		}
	}
	return out, nil
}

// inferWithin combines the repetitions as InferRepeated does, but with
// only the repetitions' own variance in the standard error: VI = mean_m
// VI_m and se^2 = mean_m se_m^2, without InferRepeated's var_m(VI_m)/M,
// the variability of the training that the study shows the need of.
func inferWithin(reps []*inference.Reductions, m framework.Measure, o inference.InferOptions) ([]inference.Result, error) {
	per := make([][]inference.Result, len(reps))
	for i, r := range reps {
		res, err := r.Infer(m, o)
		if err != nil {
			return nil, fmt.Errorf("repetition %d: %w", i+1, err)
		}
		per[i] = res
	}
	level := o.Level
	if level == 0 {
		level = inference.DefaultLevel
	}
	z := distuv.UnitNormal.Quantile(0.5 + level/2)
	M := float64(len(per))
	out := make([]inference.Result, len(per[0]))
	for k := range out {
		var vi, v2 float64
		for _, res := range per {
			vi += res[k].VI
			v2 += res[k].SE * res[k].SE
		}
		vi, v2 = vi/M, v2/M
		se := math.Sqrt(v2)
		out[k] = inference.Result{Feature: per[0][k].Feature, Estimator: per[0][k].Estimator, VI: vi, SE: se,
			CILow: vi - z*se, CIHigh: vi + z*se, PValue: inference.OneSidedPValue(vi, se, o.Delta)}
	}
	return out, nil
}
