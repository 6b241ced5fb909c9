package jacobian

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// linear is h(x) = x theta, whose PredictShifted counts the calls in
// flight (and the most at once) and panics at a dtheta whose first value
// is NaN.
type linear struct {
	theta          []float64
	inFlight, most atomic.Int64
}

func (l *linear) Fit(context.Context, mat.Matrix, []float64) error { return nil }

func (l *linear) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return l.PredictShifted(ctx, x, make([]float64, len(l.theta)))
}

func (l *linear) NumParams() int { return len(l.theta) }

func (l *linear) Jacobian(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	return mat.DenseCopyOf(x), nil
}

func (l *linear) PredictShifted(_ context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	now := l.inFlight.Add(1)
	defer l.inFlight.Add(-1)
	for {
		most := l.most.Load()
		if now <= most || l.most.CompareAndSwap(most, now) {
			break
		}
	}
	if dtheta[0] != dtheta[0] {
		panic("NaN shift")
	}
	th := make([]float64, len(l.theta))
	for i := range th {
		th[i] = l.theta[i] + dtheta[i]
	}
	runtime.Gosched() // let other calls start while this one is in flight
	n, _ := x.Dims()
	out := mat.NewDense(n, 1, nil)
	out.Mul(x, mat.NewVecDense(len(th), th))
	return out, nil
}

// Every shift's predictions are those of its own PredictShifted call, in
// order, with at most GOMAXPROCS calls at once; a call's panic is that
// shift's error.
func TestPredictShiftsEach(t *testing.T) {
	ctx := context.Background()
	m := &linear{theta: []float64{1, -2}}
	x := mat.NewDense(3, 2, []float64{1, 0, 0, 1, 2, 3})
	count := 4*runtime.GOMAXPROCS(0) + 3
	shifts := make([]framework.Shift, count)
	for i := range shifts {
		shifts[i] = framework.Shift{X: x, DTheta: []float64{float64(i), -float64(i) / 2}}
	}
	preds, err := PredictShiftsEach(ctx, m, shifts)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range preds {
		want, _ := m.PredictShifted(ctx, x, shifts[i].DTheta)
		if !mat.Equal(p, want) {
			t.Fatalf("shift %d: %v, want %v", i, mat.Formatted(p.T()), mat.Formatted(want.T()))
		}
	}
	if most := m.most.Load(); most > int64(runtime.GOMAXPROCS(0)) {
		t.Fatalf("%d calls at once, more than GOMAXPROCS = %d", most, runtime.GOMAXPROCS(0))
	}
	nan := 0.0
	shifts[count-2].DTheta = []float64{nan / nan, 0}
	if _, err := PredictShiftsEach(ctx, m, shifts); err == nil || !strings.Contains(err.Error(), "NaN shift") {
		t.Fatalf("a panicking call gave %v, want its panic as an error", err)
	}
}
