package estimators

import (
	"context"
	"fmt"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/internal/timing"
)

// Retrain trains a new model with the full model's spec (architecture,
// training settings and seed, so that both start from the same
// initialisation) on the train split with the feature dropped, and evaluates
// it on the dropped evaluation split. It is the accuracy reference and the
// cost that lazy avoids.
type Retrain struct{}

// Name returns "retrain".
func (Retrain) Name() string { return "retrain" }

// Describe implements framework.Describer.
func (Retrain) Describe() string {
	return "a new model trained without the feature (the reference; one training per feature)"
}

// Reduce trains and evaluates the reduced model.
func (Retrain) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	m, err := p.Backend.New(ctx, p.Spec)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("new model: %w", err)
	}
	defer framework.Release(m)
	stages := timing.From(ctx)
	stop := stages.Start("train")
	xtr := p.Drop(p.XTrain, f)
	if err := m.Fit(ctx, xtr, p.YTrain); err != nil {
		return framework.Reduced{}, fmt.Errorf("fit reduced model: %w", err)
	}
	// An epoch: a forward and a backward pass on every train row, three
	// passes' flops.
	stop(3 * float64(framework.FitReportOf(m).Epochs) * passFlops(m, xtr))
	stop = stages.Start("predict")
	xev := p.Drop(p.XEval, f)
	// The rows are this reduction's own: what the transport keeps of them
	// can go once predicted.
	defer jacobian.Forget(m, xev)
	pred, err := m.Predict(ctx, xev)
	if err != nil {
		return framework.Reduced{}, fmt.Errorf("predict: %w", err)
	}
	stop(passFlops(m, xev))
	return framework.Reduced{Pred: pred}, nil
}
