package experiment

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// expModel is the model an experiment trains: a backend and its options.
type expModel struct {
	backend framework.Backend
	name    string
	options map[string]string
}

// expRun is one estimation of an experiment: every estimator on the named
// features (all of them when none are named) of a simulated data set.
type expRun struct {
	sim       *simulate.Data
	model     expModel
	ests      []framework.Estimator
	features  []string
	seed      int64
	inference inference.Inference
}

// expResults are a run's results by estimator and feature, and the full
// model's training time.
type expResults struct {
	by          map[[2]string]inference.Result
	fullSeconds float64
}

func (r expResults) get(est, feature string) inference.Result {
	return r.by[[2]string{est, feature}]
}

// estimate trains the run's full model and runs its estimators.
func (x *env) estimate(run expRun) (expResults, error) {
	d := &dataio.Dataset{Source: run.sim.Setting, Names: run.sim.Names, X: run.sim.X}
	m, err := framework.LookupMeasure(run.sim.Measure)
	if err != nil {
		return expResults{}, err
	}
	start := time.Now()
	p, err := pipeline.Prepare(x.ctx, d, pipeline.Config{Backend: run.model.backend, BackendName: run.model.name, Options: run.model.options, Seed: run.seed})
	if err != nil {
		return expResults{}, fmt.Errorf("%s, seed %d: %w", run.sim.Setting, run.seed, err)
	}
	defer p.Close()
	full := time.Since(start).Seconds()
	all, err := dataio.ResolveFeatures(p.FeatureNames, "", nil, false)
	if err != nil {
		return expResults{}, err
	}
	feats := all
	if len(run.features) > 0 {
		feats = nil
		for _, f := range all {
			if slices.Contains(run.features, f.Name) {
				feats = append(feats, f)
			}
		}
	}
	res, err := pipeline.Estimate(x.ctx, p, m, run.ests, feats, pipeline.EstimateOptions{Workers: x.workers, InferOptions: inference.InferOptions{Inference: run.inference}})
	if err != nil {
		return expResults{}, fmt.Errorf("%s, seed %d: %w", run.sim.Setting, run.seed, err)
	}
	out := expResults{by: map[[2]string]inference.Result{}, fullSeconds: full}
	for _, r := range res {
		out.by[[2]string{r.Estimator, r.Feature}] = r
	}
	return out, nil
}

// reseededRetrain is retrain with the model's seed moved by Offset: a
// second retrain, started from another initialisation (and another
// validation slice), whose distance from the first is retrain's own
// noise.
type reseededRetrain struct{ Offset int64 }

func (r reseededRetrain) Name() string { return "retrain-seed" + strconv.FormatInt(r.Offset, 10) }

func (r reseededRetrain) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	q := *p
	q.Spec.Seed += r.Offset
	return estimators.Retrain{}.Reduce(ctx, &q, f)
}

func lookupAll(names ...string) ([]framework.Estimator, error) {
	out := make([]framework.Estimator, len(names))
	for i, n := range names {
		e, err := framework.LookupEstimator(n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	if len(x) == 1 {
		return x[0], 0
	}
	return stat.MeanStdDev(x, nil)
}

func meanAbs(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += math.Abs(v)
	}
	return s / float64(len(x))
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
