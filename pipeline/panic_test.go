package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// panickingBackend is meanBackend whose models panic in Fit.
type panickingBackend struct{ meanBackend }

func (panickingBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &panickingModel{}, nil
}

type panickingModel struct{ meanModel }

func (*panickingModel) Fit(context.Context, mat.Matrix, []float64) error {
	panic("index out of range")
}

// TestFitPanicIsAnError: a backend whose training panics (a bug in it)
// fails the run with an error naming the panic instead of ending the
// process: a backend in the caller's process shares its fate.
func TestFitPanicIsAnError(t *testing.T) {
	cfg := pipeline.Config{Backend: panickingBackend{}, Seed: 1}
	_, err := pipeline.Run(context.Background(), dataset(200, 1), cfg, nil, []framework.Estimator{shift{1}}, pipeline.EstimateOptions{})
	if err == nil || !strings.Contains(err.Error(), "panic") || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("want an error naming the panic, got %v", err)
	}
}
