package lazy

import (
	"context"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// preparedCounter is an mlp model that counts its PredictPrepared calls.
type preparedCounter struct {
	*mlp.Model
	calls *atomic.Int32
}

func (c preparedCounter) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	c.calls.Add(1)
	return c.Model.PredictPrepared(ctx, x)
}

// TestLazyScaledPredictsPrepared: at scale lazy predicts the train rows by
// the model's PredictPrepared, whose products follow on the same rows (the
// conformance suite checks that it predicts what Predict does, to the
// bit); at the dense sizes, whose products do not follow, by Predict.
func TestLazyScaledPredictsPrepared(t *testing.T) {
	ctx := context.Background()
	sim, err := simulate.Generate("linear", 120, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 3, Options: map[string]string{"hidden": "8", "epochs": "20"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var calls atomic.Int32
	p.Full = preparedCounter{Model: p.Full.(*mlp.Model), calls: &calls}
	f := p.Features()[0]
	if _, err := (Estimator{}).Reduce(ctx, p, f); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("dense path: %d PredictPrepared calls, want none", n)
	}
	if _, err := (Estimator{Memory: tinyMemory}).Reduce(ctx, p, f); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("scaled path: %d PredictPrepared calls, want one (the train rows' residuals)", n)
	}
}
