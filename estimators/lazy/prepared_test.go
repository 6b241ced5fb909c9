package lazy

import (
	"context"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// preparedCounter is an mlp model that counts its PredictPrepared calls,
// and its single-precision view's.
type preparedCounter struct {
	*mlp.Model
	calls, single *atomic.Int32
}

func (c preparedCounter) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	c.calls.Add(1)
	return c.Model.PredictPrepared(ctx, x)
}

func (c preparedCounter) SinglePrecision() framework.JacobianMultiplier {
	return singleCounter{c.Model.SinglePrecision(), c.single}
}

// singleCounter is a single-precision view that counts its PredictPrepared
// calls.
type singleCounter struct {
	framework.JacobianMultiplier
	calls *atomic.Int32
}

func (c singleCounter) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	c.calls.Add(1)
	return c.JacobianMultiplier.(framework.PreparedPredictor).PredictPrepared(ctx, x)
}

// TestLazyScaledPredictsPrepared: at scale lazy predicts the train rows by
// a PredictPrepared, whose products follow on the same rows: in single
// precision the single-precision view's (its products' float32 pass), in
// double the model's (the conformance suite checks that it predicts what
// Predict does, to the bit); at the dense sizes, whose products do not
// follow, by Predict.
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
	var calls, single atomic.Int32
	p.Full = preparedCounter{Model: p.Full.(*mlp.Model), calls: &calls, single: &single}
	f := p.Features()[0]
	for _, c := range []struct {
		name        string
		est         Estimator
		model, view int32
	}{
		{"dense path", Estimator{}, 0, 0},
		{"scaled path, single precision", Estimator{Memory: tinyMemory}, 0, 1},
		{"scaled path, double precision", Estimator{Memory: tinyMemory, DoublePrecision: true}, 1, 0},
	} {
		calls.Store(0)
		single.Store(0)
		if _, err := c.est.Reduce(ctx, p, f); err != nil {
			t.Fatal(err)
		}
		if m, v := calls.Load(), single.Load(); m != c.model || v != c.view {
			t.Errorf("%s: %d PredictPrepared calls of the model and %d of its single-precision view, want %d and %d", c.name, m, v, c.model, c.view)
		}
	}
}
