package nn

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/lazyvi/lazyvi/framework"
)

// TestWarmRate: the rise to WarmPeak over the first quarter of the steps,
// then the linear fall, at the points the documentation names.
func TestWarmRate(t *testing.T) {
	for _, c := range []struct {
		t, steps int
		want     float64
	}{
		{0, 120, 4.0 / 30}, {14, 120, 2}, {29, 120, 4}, {30, 120, 4}, {75, 120, 2}, {119, 120, 4.0 / 90},
		{0, 1, 4}, {0, 3, 4}, {2, 3, 4.0 / 3}, {0, 4, 4}, {1, 4, 4}, {3, 4, 4.0 / 3},
	} {
		if got := WarmRate(c.t, c.steps); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("WarmRate(%d, %d) = %g, want %g", c.t, c.steps, got, c.want)
		}
	}
}

// constNet has one parameter whose gradient is always 1.
type constNet struct{}

func (constNet) Forward(x blas64.General) []float64 { return make([]float64, x.Rows) }
func (constNet) Backward(_, grad []float64)         { grad[0] = 1 }
func (constNet) Update()                            {}

// TestContinueSchedule: under a constant gradient a fresh Adam's step is
// its learning rate (m-hat = g, v-hat = g^2; up to AdamEps), so Continue moves the
// parameter by lr times the sum of WarmRate over the steps, and leaves the
// trainer's rate as it was.
func TestContinueSchedule(t *testing.T) {
	head := &Head{Name: "test", Task: framework.Regression, Outs: 1, Sd: 1}
	x, y := rowsData(10, 1)
	const lr, steps = 0.01, 37
	theta := []float64{0}
	tr := NewTrainer(head, constNet{}, x, y, theta, 4, lr)
	if err := tr.Continue(context.Background(), NewRNG(1, 2), steps); err != nil {
		t.Fatal(err)
	}
	var want float64
	for s := range steps {
		want -= lr * WarmRate(s, steps)
	}
	// Each step is lr/(1 + AdamEps) exactly: a relative error of AdamEps.
	if math.Abs(theta[0]-want) > 2*AdamEps*math.Abs(want) {
		t.Errorf("parameter after %d steps: %g, want %g", steps, theta[0], want)
	}
	if tr.opt.lr != lr {
		t.Errorf("learning rate after Continue: %g, want %g", tr.opt.lr, lr)
	}
}

// countdownCtx is a context whose Err is nil for its first left calls and
// context.Canceled from then on.
type countdownCtx struct {
	context.Context
	left int
}

func (c *countdownCtx) Err() error {
	if c.left--; c.left < 0 {
		return context.Canceled
	}
	return nil
}

// TestRunStopsWithinAnEpoch: Run looks at its context every runCheckEvery
// steps, not only between epochs: cancelled after its third look, it
// stops after 3 runCheckEvery of the 1000 steps asked (each of a constant
// gradient's steps moves the parameter by the learning rate, up to
// AdamEps), with the context's error.
func TestRunStopsWithinAnEpoch(t *testing.T) {
	head := &Head{Name: "test", Task: framework.Regression, Outs: 1, Sd: 1}
	x, y := rowsData(10, 1)
	const lr = 0.01
	theta := []float64{0}
	tr := NewTrainer(head, constNet{}, x, y, theta, 4, lr)
	err := tr.Run(&countdownCtx{Context: context.Background(), left: 3}, NewRNG(1, 2), 1000)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: want context.Canceled, got %v", err)
	}
	want := -lr * 3 * runCheckEvery
	if math.Abs(theta[0]-want) > 2*AdamEps*math.Abs(want) {
		t.Errorf("parameter after the interrupted Run: %g, want %g (%d steps)", theta[0], want, 3*runCheckEvery)
	}
}
