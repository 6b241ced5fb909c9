package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// countingBackend is meanBackend counting the models it fits.
type countingBackend struct {
	meanBackend
	fits *int
}

func (b countingBackend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	return &countingModel{fits: b.fits}, nil
}

type countingModel struct {
	meanModel
	fits *int
}

// fitsMu guards the counts: PrepareFolds fits the folds concurrently.
var fitsMu sync.Mutex

func (m *countingModel) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	fitsMu.Lock()
	*m.fits++
	fitsMu.Unlock()
	return m.meanModel.Fit(ctx, x, y)
}

// scaled returns dataset(n, seed) with column j multiplied by s.
func scaled(n int, seed uint64, j int, s float64) *dataio.Dataset {
	d := dataset(n, seed)
	for i := 0; i < n; i++ {
		d.X.Set(i, j, s*d.X.At(i, j))
	}
	return d
}

// TestExtremeValuesFailBeforeTraining: a feature near 1e200 or 1e308, or
// a response whose errors overflow at the fourth power, is an input error
// naming its column before any model is fitted.
func TestExtremeValuesFailBeforeTraining(t *testing.T) {
	nan := dataset(300, 1)
	nan.X.Set(7, 1, math.NaN())
	for i, tc := range []struct {
		d    *dataio.Dataset
		want string
	}{
		{scaled(300, 1, 0, 1e199), `test.csv: row `},
		{scaled(300, 1, 0, 1e199), `column "a": `},
		{scaled(300, 1, 0, 1e307), `column "a": `},
		{scaled(300, 1, 1, 1e200), `column "b": `},
		{scaled(300, 1, 3, 1e80), `column "y": `},
		{nan, `test.csv: row 9, column "b": NaN is not a finite number`},
	} {
		var fits int
		cfg := pipeline.Config{Backend: countingBackend{fits: &fits}, Seed: 1}
		_, err := pipeline.Run(context.Background(), tc.d, cfg, nil, []framework.Estimator{shift{1}}, pipeline.EstimateOptions{})
		var ie *dataio.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Case %d: want a one-line input error containing %q, got %v", i, tc.want, err)
		}
		if fits != 0 {
			t.Errorf("Case %d: %d models fitted before the error", i, fits)
		}
		if _, err := pipeline.PrepareFolds(context.Background(), tc.d, cfg, 3, 1); !errors.As(err, &ie) || fits != 0 {
			t.Errorf("Case %d: PrepareFolds: want the input error before any fit, got %v after %d fits", i, err, fits)
		}
	}
}

// TestLargeFeatureIsStandardised: a feature at 1e100, below the limit,
// gives the importances of the unscaled data (standardisation removes the
// scale) to rounding.
func TestLargeFeatureIsStandardised(t *testing.T) {
	run := func(d *dataio.Dataset) []inference.Result {
		rep, err := pipeline.Run(context.Background(), d, pipeline.Config{Backend: meanBackend{}, Seed: 3}, measures.MSE(),
			[]framework.Estimator{shift{0.5}}, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Split}})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Results
	}
	want, got := run(dataset(300, 2)), run(scaled(300, 2, 0, 1e100))
	for j := range want {
		if !scalar.EqualWithinRel(got[j].VI, want[j].VI, 1e-9) || !scalar.EqualWithinRel(got[j].SE, want[j].SE, 1e-9) {
			t.Errorf("feature %s: vi %v se %v at 1e100, want %v, %v", want[j].Feature, got[j].VI, got[j].SE, want[j].VI, want[j].SE)
		}
	}
}

// TestCheckRunBeforeAnyFit: what can be checked without a model fails
// before the first fit, as an input or usage error naming the file where
// the data is at fault.
func TestCheckRunBeforeAnyFit(t *testing.T) {
	rare := dataset(60, 1) // a binary response with one positive row
	for i := 0; i < 60; i++ {
		rare.X.Set(i, 3, 0)
	}
	rare.X.Set(17, 3, 1)
	for i, tc := range []struct {
		d    *dataio.Dataset
		cfg  pipeline.Config
		m    framework.Measure
		opt  pipeline.EstimateOptions
		want string
	}{
		{dataset(10, 1), pipeline.Config{}, nil, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Split}},
			"test.csv: 10 rows are too few: split inference needs at least 4 evaluation rows (2 per half), the train split leaves 3"},
		{dataset(20, 1), pipeline.Config{CrossFit: 11}, nil, pipeline.EstimateOptions{}, "test.csv: 20 rows are too few for 11 cross-fitting folds"},
		{dataset(12, 1), pipeline.Config{MinTrain: 10}, nil, pipeline.EstimateOptions{}, "test.csv: 12 rows are too few"},
		{dataset(50, 1), pipeline.Config{Groups: []dataio.Group{{Name: "g", Columns: []string{"nope"}}}}, nil, pipeline.EstimateOptions{}, `group "g": no column "nope"`},
		{dataset(50, 1), pipeline.Config{Groups: []dataio.Group{{Name: "g", Columns: []string{"y"}}}}, nil, pipeline.EstimateOptions{}, `column "y" is the response`},
		{dataset(50, 1), pipeline.Config{}, measures.Accuracy(), pipeline.EstimateOptions{}, `test.csv, column "y": measure accuracy does not fit a regression response`},
		{rare, pipeline.Config{}, measures.AUC(), pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Split}},
			`test.csv, column "y": a half of the evaluation split (split inference) (10 rows, seed 0): measure auc: the 10 responses are all 0`},
		{rare, pipeline.Config{CrossFit: 3}, measures.AUC(), pipeline.EstimateOptions{}, `test.csv, column "y": a cross-fitting fold (20 rows, seed 0): measure auc`},
		{dataset(50, 1), pipeline.Config{}, nil, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Level: 1.5}}, "Level must be in (0, 1)"},
		{dataset(50, 1), pipeline.Config{}, nil, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Delta: math.NaN()}}, "Delta must be a finite number"},
		// At least as many features as training rows: no importance can
		// be told apart, whatever the split.
		{wideData(20, 30), pipeline.Config{}, nil, pipeline.EstimateOptions{}, "test.csv: 30 features and 13 training rows: with at least as many features as training rows"},
		{wideData(40, 20), pipeline.Config{CrossFit: 2}, nil, pipeline.EstimateOptions{}, "test.csv: 20 features and 20 training rows"},
		{wideData(40, 20), pipeline.Config{Partition: append(make([]int, 20), slices.Repeat([]int{1}, 20)...)}, nil, pipeline.EstimateOptions{}, "test.csv: 20 features and 20 training rows"},
		// Counts beyond the features are refused before any allocation
		// they would size (a check of 1e9 features ran out of memory).
		{dataset(50, 1), pipeline.Config{}, nil, pipeline.EstimateOptions{Check: pipeline.Check{K: 1e9, Estimator: shift{1}}}, "EstimateOptions.Check 1000000000: the run has 3 features; check at most 3"},
		{dataset(50, 1), pipeline.Config{}, nil, pipeline.EstimateOptions{Shard: pipeline.Shard{Index: 1, Count: 1 << 62}}, "the run has 3 features; use at most 3 shards"},
	} {
		if err := pipeline.CheckRun(tc.d, tc.cfg, tc.m, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("Case %d: CheckRun: want a usage error containing %q, got %v", i, tc.want, err)
		}
		var fits int
		tc.cfg.Backend = countingBackend{fits: &fits}
		_, err := pipeline.Run(context.Background(), tc.d, tc.cfg, tc.m, []framework.Estimator{shift{1}}, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("Case %d: Run: want a usage error containing %q, got %v", i, tc.want, err)
		}
		if fits != 0 {
			t.Errorf("Case %d: %d models fitted before the error", i, fits)
		}
	}
	// The smallest data that passes runs.
	if err := pipeline.CheckRun(dataset(12, 1), pipeline.Config{}, nil, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Split}}); err != nil {
		t.Errorf("12 rows, split inference: %v", err)
	}
}

// wideData is n rows of p standard normal features and a response y.
func wideData(n, p int) *dataio.Dataset {
	rng := rand.New(rand.NewPCG(uint64(n), uint64(p)))
	x := mat.NewDense(n, p+1, nil)
	names := make([]string, p+1)
	for j := range p {
		names[j] = fmt.Sprintf("x%d", j)
	}
	names[p] = "y"
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		x.Set(i, p, x.At(i, 0)+rng.NormFloat64())
	}
	return &dataio.Dataset{Source: "test.csv", Names: names, X: x}
}

// TestNonFiniteResultIsAnError: a VI or standard error that overflows is
// an ErrNonFinite error naming estimator and feature, not a result; a full
// model whose score overflows fails before any reduced model.
func TestNonFiniteResultIsAnError(t *testing.T) {
	y := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	full := []float64{0.5, 1, 2, 2.5, 4, 5, 6.5, 7}
	p := &framework.Problem{YEval: y, FullEval: mat.NewDense(len(full), 1, full), XEval: mat.NewDense(len(y), 1, nil)}
	huge := []float64{0, 1, 2, 3, 4, 5, 6, 1e200} // in half B too, which scores the reduced model for split inference
	est := fixedPred{pred: mat.NewDense(8, 1, huge)}
	for _, inf := range []inference.Inference{inference.Plain, inference.Split} {
		_, err := pipeline.Estimate(context.Background(), p, measures.MSE(), []framework.Estimator{est}, []framework.Feature{{Name: "x", Columns: []int{0}}},
			pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inf}, Workers: 1})
		if !errors.Is(err, framework.ErrNonFinite) || errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "estimator fixed, feature x: the ") {
			t.Errorf("%s: want an ErrNonFinite error naming estimator and feature, got %v", inf, err)
		}
	}
	bad := &framework.Problem{YEval: y, FullEval: mat.NewDense(len(huge), 1, huge), XEval: mat.NewDense(len(y), 1, nil)}
	called := false
	spy := spyEstimator{called: &called}
	_, err := pipeline.Estimate(context.Background(), bad, measures.MSE(), []framework.Estimator{spy}, []framework.Feature{{Name: "x", Columns: []int{0}}}, pipeline.EstimateOptions{})
	if !errors.Is(err, framework.ErrNonFinite) || !strings.Contains(err.Error(), "measure mse of the full model") {
		t.Errorf("full model: want an ErrNonFinite error naming the full model, got %v", err)
	}
	if called {
		t.Error("a reduced model was fitted after the full model's score overflowed")
	}
}

// fixedPred is an estimator named "fixed" whose reduced model predicts pred.
type fixedPred struct{ pred *mat.Dense }

func (fixedPred) Name() string { return "fixed" }
func (e fixedPred) Reduce(context.Context, *framework.Problem, framework.Feature) (framework.Reduced, error) {
	return framework.Reduced{Pred: e.pred}, nil
}

type spyEstimator struct{ called *bool }

func (spyEstimator) Name() string { return "spy" }
func (s spyEstimator) Reduce(_ context.Context, p *framework.Problem, _ framework.Feature) (framework.Reduced, error) {
	*s.called = true
	return framework.Reduced{Pred: p.FullEval}, nil
}
