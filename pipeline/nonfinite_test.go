package pipeline_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// nanBackend's models predict NaN for one row, as a user's network that
// computes NaN or Inf does.
type nanBackend struct{}

func (nanBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (nanBackend) Options() []framework.OptionInfo      { return nil }
func (nanBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &nanModel{}, nil
}

type nanModel struct{ meanModel }

func (m *nanModel) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	out, err := m.meanModel.Predict(ctx, x)
	if err == nil {
		out.Set(2, 0, math.Inf(1))
	}
	return out, err
}

// TestFullModelNonFinite: a full model whose predictions are not finite
// fails before any reduction, with an ErrNonFinite error that names the
// row and says where such values come from.
func TestFullModelNonFinite(t *testing.T) {
	var called bool
	_, err := pipeline.Run(context.Background(), dataset(60, 1), pipeline.Config{Backend: nanBackend{}, BackendName: "nan", Seed: 1},
		measures.MSE(), []framework.Estimator{spyEstimator{&called}}, pipeline.EstimateOptions{})
	if !errors.Is(err, framework.ErrNonFinite) || !strings.Contains(err.Error(), "is +Inf: non-finite result") || !strings.Contains(err.Error(), "computes NaN or Inf") {
		t.Errorf("err %v, want ErrNonFinite naming the row with a hint", err)
	}
	if called {
		t.Error("a reduction ran after the full model's predictions came out infinite")
	}
}
