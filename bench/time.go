package bench

import (
	"context"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/internal/timing"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// Simulated trains the full model once and times each estimator over all
// features, one estimator at a time so that each one's wall time is its own.
func Simulated(ctx context.Context, sim *simulate.Data, r Options) (Report, error) {
	d := &dataio.Dataset{Source: sim.Setting, Names: sim.Names, X: sim.X}
	truth := sim.Truth
	if sim.Setting == "highdim" {
		// The truth by Monte Carlo, once per process. Retrain is no
		// reference here: a second retrain from another seed is itself an
		// estimate, with its own training noise.
		var err error
		if truth, err = simulate.HighDimTruth(ctx, sim.Rho); err != nil {
			return Report{Case: sim.Setting}, err
		}
	}
	run, _, err := Time(ctx, Input{Data: d, Measure: sim.Measure, Truth: truth}, r)
	run.Case = sim.Setting
	return run, err
}

// Input is what the estimators are timed on.
type Input struct {
	Data      *dataio.Dataset
	Partition []int     // explicit evaluation rows (pipeline.Config.Partition); nil: the seeded split
	Target    string    // the response column ("": the last)
	Measure   string    // "": the task's default
	Truth     []float64 // the true VI of the features, when known
	Backend   string    // the backend's name for the report and the problem ("": mlp)
}

// Options are how the estimators are timed.
type Options struct {
	Backend    framework.Backend
	Options    map[string]string // the backend's
	Estimators []framework.Estimator
	Workers    int   // features estimated at a time
	Features   int   // time the first Features features only (0: all)
	Seed       int64 // of the split and the models
	// Progress, when set, is told the features done of each estimator's
	// run (pipeline.EstimateOptions.Progress).
	Progress func(done, total int)
}

// Time trains the full model on in once and times each estimator over
// the first r.Features features (0: all), one estimator at a time so that
// each one's wall time is its own; it returns the VIs by estimator too.
func Time(ctx context.Context, in Input, r Options) (Report, map[string][]float64, error) {
	be, opts, ests, workers, nFeatures, seed := r.Backend, r.Options, r.Estimators, r.Workers, r.Features, r.Seed
	start := time.Now()
	name := in.Backend
	if name == "" {
		name = "mlp"
	}
	p, err := pipeline.Prepare(ctx, in.Data, pipeline.Config{Target: in.Target, Backend: be, BackendName: name, Options: opts, Seed: seed, Partition: in.Partition})
	if err != nil {
		return Report{}, nil, err
	}
	defer p.Close()
	n, _ := in.Data.X.Dims()
	run := Report{Backend: in.Backend, N: n, P: len(p.FeatureNames), Width: opts["hidden"], Workers: workers, FullSeconds: time.Since(start).Seconds()}
	if e, ok := opts["epochs"]; ok {
		run.Epochs, _ = strconv.Atoi(e)
	}
	measure := in.Measure
	if measure == "" {
		measure = p.Task.DefaultMeasure()
	}
	m, err := framework.LookupMeasure(measure)
	if err != nil {
		return Report{}, nil, err
	}
	feats := p.Features()
	if nFeatures > 0 && nFeatures < len(feats) {
		feats = feats[:nFeatures]
	}
	truth := in.Truth
	if truth != nil {
		truth = truth[:len(feats)]
	}
	vis := map[string][]float64{}
	for _, e := range ests {
		start := time.Now()
		var stages timing.Stages
		res, err := pipeline.Estimate(timing.With(ctx, &stages), p, m, []framework.Estimator{e}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: workers, Progress: r.Progress})
		if err != nil {
			return Report{}, nil, err
		}
		total := time.Since(start).Seconds()
		secs := make([]float64, len(res))
		vi := make([]float64, len(res))
		sr := Result{Estimator: e.Name(), Features: len(res), SecondsTotal: total, SecondsPerFeature: total / float64(len(res))}
		sr.Steps, sr.StepsGFlops = stepsOf(stages.Totals())
		busy := 0.0
		for i, r := range res {
			secs[i], vi[i] = r.Seconds, r.VI
			busy += r.Seconds
			if v, ok := r.Get("cv_rows"); ok {
				sr.CVRows = int(v.(float64))
			}
			if v, ok := r.Get("krylov_steps"); ok {
				sr.KrylovSteps += int(v.(float64))
			}
			if v, ok := r.Get("flops"); ok {
				sr.Flops += v.(float64)
			}
		}
		if sr.Flops > 0 && busy > 0 {
			sr.GFlopsRate = sr.Flops / busy / 1e9
		}
		sr.SecondsPerFeatureMedian = median(secs)
		vis[e.Name()] = vi
		run.Results = append(run.Results, sr)
	}
	for i := range run.Results {
		r := &run.Results[i]
		switch ref := vis["retrain"]; {
		case truth != nil:
			r.ErrorMean, r.ErrorAgainst = meanAbsDiff(vis[r.Estimator], truth), "truth"
		case ref != nil && r.Estimator != "retrain":
			r.ErrorMean, r.ErrorAgainst = meanAbsDiff(vis[r.Estimator], ref), "retrain"
		}
	}
	return run, vis, nil
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func meanAbsDiff(a, b []float64) *float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	s /= float64(len(a))
	return &s
}
