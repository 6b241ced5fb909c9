package pipeline_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	_ "github.com/lazyvi/lazyvi/estimators" // registers dropout, retrain, lazy-es
	"github.com/lazyvi/lazyvi/framework"
	_ "github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// TestLookupEstimators: a list resolves in its order; a repeated, an
// unknown name and an empty list are errors.
func TestLookupEstimators(t *testing.T) {
	ests, err := pipeline.LookupEstimators(" retrain, dropout ")
	if err != nil || !slices.Equal(pipeline.EstimatorNames(ests), []string{"retrain", "dropout"}) {
		t.Fatalf("got %v, %v", pipeline.EstimatorNames(ests), err)
	}
	for _, bad := range []string{"dropout,dropout", "", " , ", "no-such-estimator"} {
		if _, err := pipeline.LookupEstimators(bad); err == nil {
			t.Errorf("LookupEstimators(%q) succeeded", bad)
		}
	}
	if _, err := pipeline.ConfigureEstimators(ests, map[string]string{}); err != nil {
		t.Errorf("no settings: %v", err)
	}
}

// TestFittingEstimators: an estimator that needs warm starts is dropped
// for a backend without them, with a note naming it; nothing is dropped
// for a backend that has them.
func TestFittingEstimators(t *testing.T) {
	ests, err := pipeline.LookupEstimators("dropout,lazy-es")
	if err != nil {
		t.Fatal(err)
	}
	out, note := pipeline.FittingEstimators("b", framework.Capabilities{}, ests)
	if !slices.Equal(pipeline.EstimatorNames(out), []string{"dropout"}) || !strings.Contains(note, "not lazy-es") {
		t.Errorf("no warm starts: kept %v, note %q", pipeline.EstimatorNames(out), note)
	}
	out, note = pipeline.FittingEstimators("b", framework.Capabilities{WarmStart: true, Gradients: true}, ests)
	if len(out) != 2 || note != "" {
		t.Errorf("warm starts: kept %v, note %q", pipeline.EstimatorNames(out), note)
	}
	// linear has no warm starts: lazy-es is refused, dropout runs.
	if err := pipeline.CheckBackend("linear", linear.Backend{}, tinyData(), "", nil, ests[1:], nil); !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "lazy-es needs a backend with") {
		t.Errorf("lazy-es on linear: %v, want a usage error naming it", err)
	}
	if err := pipeline.CheckBackend("linear", linear.Backend{}, tinyData(), "", nil, ests[:1], map[string]string{"ridge": "1"}); err != nil {
		t.Errorf("dropout on linear: %v", err)
	}
}

// tinyData is four rows of a feature and a 0/1 response.
func tinyData() *dataio.Dataset {
	return &dataio.Dataset{Source: "tiny", Names: []string{"x", "y"}, X: mat.NewDense(4, 2, []float64{1, 0, 2, 1, 3, 0, 4, 1})}
}

// TestCheckMeasureAndBackend: a measure of another task, an unknown
// backend option and a 0/1 response for a backend without classification
// are refused before any fit.
func TestCheckMeasureAndBackend(t *testing.T) {
	d := tinyData()
	if task, col, ok := pipeline.ResponseTask(d, "", nil); !ok || task != framework.Binary || col != "y" {
		t.Errorf("ResponseTask: %v %q %v, want binary y", task, col, ok)
	}
	reg := framework.Regression
	if _, _, ok := pipeline.ResponseTask(d, "nope", &reg); ok {
		t.Error("ResponseTask found an unknown target")
	}
	mse, err := framework.LookupMeasure("mse")
	if err != nil {
		t.Fatal(err)
	}
	logloss, err := framework.LookupMeasure("logloss")
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.CheckMeasure(d, "", &reg, logloss); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("logloss on a regression: %v", err)
	}
	if err := pipeline.CheckMeasure(d, "", &reg, mse); err != nil {
		t.Errorf("mse on a regression: %v", err)
	}
	be := linear.Backend{}
	if err := pipeline.CheckBackend("linear", be, d, "", &reg, nil, map[string]string{"no-such-option": "1"}); !errors.Is(err, framework.ErrUsage) {
		t.Errorf("unknown option: %v, want a usage error", err)
	}
}

// TestRunnableEstimators: a backend without warm starts runs dropout and
// retrain, not lazy-es, which alone of them needs warm starts.
func TestRunnableEstimators(t *testing.T) {
	got := pipeline.RunnableEstimators(framework.Capabilities{})
	if !slices.Contains(got, "dropout") || !slices.Contains(got, "retrain") || slices.Contains(got, "lazy-es") {
		t.Errorf("RunnableEstimators(none) = %v", got)
	}
	if got := pipeline.EstimatorsNeeding(framework.Capabilities{WarmStart: true}); !slices.Contains(got, "lazy-es") || slices.Contains(got, "dropout") {
		t.Errorf("EstimatorsNeeding(warm start) = %v", got)
	}
}
