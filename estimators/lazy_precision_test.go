package estimators

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// rfSingleModel is rfMultiplierModel with single-precision products
// (framework.SinglePrecisioner): its products rounded to float32, counted.
type rfSingleModel struct {
	rfMultiplierModel
	calls *atomic.Int64
}

func (r rfSingleModel) SinglePrecision() framework.JacobianMultiplier { return rfRounded(r) }

type rfRounded rfSingleModel

func (r rfRounded) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return r.round(r.rfMultiplierModel.JacobianMul(ctx, x, v))
}

func (r rfRounded) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return r.round(r.rfMultiplierModel.JacobianTMul(ctx, x, u))
}

func (r rfRounded) round(d *mat.Dense, err error) (*mat.Dense, error) {
	r.calls.Add(1)
	if err != nil {
		return nil, err
	}
	d.Apply(func(_, _ int, v float64) float64 { return float64(float32(v)) }, d)
	return d, nil
}

// Lazy's matrix-free solves use the model's single-precision products
// unless DoublePrecision (lazy-precision double) is set; with them the
// reduced predictions meet the closed form's bound of
// TestLazyMatrixFreeMatchesClosedForm (the rounding, 6e-8 relative, is far
// below the solve's tolerance).
func TestLazyPrecision(t *testing.T) {
	ctx := context.Background()
	r := newRF(4, 20, 3)
	model := rfSingleModel{rfMultiplierModel{r}, new(atomic.Int64)}
	p := problemFor(t, model, 100, 40, 4, 12)
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	const alpha = 3.0
	_, decrease, _, norms := ridgeOptimum(r, p, f, alpha)
	want := wantLazy(r, p, f, alpha)
	for _, double := range []bool{false, true} {
		setting := map[bool]string{false: "single", true: "double"}[double]
		e, err := Lazy{Folds: 4, Lambda: alpha, Memory: tinyMemory}.Configure(map[string]string{"lazy-precision": setting})
		if err != nil {
			t.Fatal(err)
		}
		if lz := e.(Lazy); lz.DoublePrecision != double {
			t.Fatalf("lazy-precision %s: DoublePrecision %v", setting, lz.DoublePrecision)
		}
		model.calls.Store(0)
		red, err := e.(Lazy).Reduce(ctx, p, f)
		if err != nil {
			t.Fatalf("%s: %v", setting, err)
		}
		if red.Stats[statMethod] != 1 {
			t.Fatalf("%s: not solved matrix-free: stats %v", setting, red.Stats)
		}
		if got := model.calls.Load(); (got > 0) == double {
			t.Errorf("lazy-precision %s: %d single-precision products", setting, got)
		}
		for k, wv := range want {
			bound := norms[k] * math.Sqrt(energyTol*decrease/alpha)
			if gv := red.Pred.At(k, 0); math.Abs(gv-wv) > bound {
				t.Fatalf("%s: row %d: want %v, got %v (bound %g)", setting, k, wv, gv, bound)
			}
		}
	}
	if _, err := (Lazy{}).Configure(map[string]string{"lazy-precision": "half"}); err == nil {
		t.Error("lazy-precision half accepted")
	}
}
