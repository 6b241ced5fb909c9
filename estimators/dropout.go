package estimators

import (
	"context"
	"fmt"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/internal/timing"
)

// Dropout evaluates the full model on the evaluation split with the feature
// replaced by its train mean. It is cheap and, for correlated features,
// biased upward (Proposition 3.1 of the paper: it measures beta_j^2 Var(x_j)
// for a linear truth, not the conditional importance).
type Dropout struct{}

// Name returns "dropout".
func (Dropout) Name() string { return "dropout" }

// Describe implements framework.Describer.
func (Dropout) Describe() string {
	return "the full model with the feature set to its train mean (fast; biased up for correlated features)"
}

// Reduce predicts the full model on the dropped evaluation data.
func (Dropout) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	stop := timing.From(ctx).Start("predict")
	xev := p.Drop(p.XEval, f)
	// The rows are this reduction's own: what the model or its transport
	// keeps of them can go once predicted.
	defer jacobian.Forget(p.Full, xev)
	pred, err := p.Full.Predict(ctx, xev)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict: %w", err)
	}
	stop(passFlops(p.Full, xev))
	return framework.Reduced{Pred: pred}, nil
}
