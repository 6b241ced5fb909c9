package backendplugin

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// preparingLinear is the fake linear backend whose models are
// framework.PreparedPredictors that count their PredictPrepared calls.
type preparingLinear struct {
	*linear
	calls *atomic.Int32
}

func (b preparingLinear) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.linear.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return preparingModel{m.(*linModel), b.calls}, nil
}

type preparingModel struct {
	*linModel
	calls *atomic.Int32
}

func (m preparingModel) PredictPrepared(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	m.calls.Add(1)
	return m.linModel.Predict(ctx, x)
}

// The remote model's PredictPrepared reaches the plugin's model's when it
// has one, and is its Predict otherwise (a plugin that does not know the
// request's field does the same); Predict never prepares. Both give the
// in-process predictions.
func TestPredictPrepared(t *testing.T) {
	ctx := context.Background()
	for _, prepares := range []bool{true, false} {
		var calls atomic.Int32
		var b framework.Backend = newLinear()
		if prepares {
			b = preparingLinear{newLinear(), &calls}
		}
		r := inProcessServer(t, "linear", newServer(b), nil)
		rng := rand.New(rand.NewPCG(3, 4))
		m, _, _ := fitted(t, r, rng, 50, 4)
		x := randDense(rng, 30, 4)
		pp, ok := m.(framework.PreparedPredictor)
		if !ok {
			t.Fatal("the remote model is not a PreparedPredictor")
		}
		want, err := m.Predict(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != 0 {
			t.Errorf("prepares %v: Predict made %d PredictPrepared calls", prepares, n)
		}
		got, err := pp.PredictPrepared(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		if !mat.Equal(got, want) {
			t.Errorf("prepares %v: PredictPrepared differs from Predict", prepares)
		}
		if n, wantN := calls.Load(), map[bool]int32{true: 1, false: 0}[prepares]; n != wantN {
			t.Errorf("prepares %v: the plugin's model got %d PredictPrepared calls, want %d", prepares, n, wantN)
		}
	}
}
