package lazy

import (
	"context"
	"math"
	"sync"
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
		e, err := Estimator{Folds: 4, Lambda: alpha, Memory: tinyMemory}.Configure(map[string]string{"lazy-precision": setting})
		if err != nil {
			t.Fatal(err)
		}
		if lz := e.(Estimator); lz.DoublePrecision != double {
			t.Fatalf("lazy-precision %s: DoublePrecision %v", setting, lz.DoublePrecision)
		}
		model.calls.Store(0)
		red, err := e.(Estimator).Reduce(ctx, p, f)
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
	if _, err := (Estimator{}).Configure(map[string]string{"lazy-precision": "half"}); err == nil {
		t.Error("lazy-precision half accepted")
	}
}

// rfSingleKernelModel is rfKernelModel with a single-precision kernel and
// transposed product (framework.SingleKerneler): its kernel's and
// products' values rounded to float32, counted, and the rows of each
// JacobianTVec recorded.
type rfSingleKernelModel struct {
	rfKernelModel
	calls *atomic.Int64
	rows  *sync.Map // rows of x in JacobianTVec -> true
}

func (r rfSingleKernelModel) SingleKernel() framework.Kerneler { return rfRoundedKernel(r) }

type rfRoundedKernel rfSingleKernelModel

func (r rfRoundedKernel) Kernel(ctx context.Context, x1, x2 mat.Matrix) (*mat.Dense, error) {
	return rfRounded{calls: r.calls}.round(r.rfKernelModel.Kernel(ctx, x1, x2))
}

func (r rfRoundedKernel) JacobianTVec(ctx context.Context, x mat.Matrix, a []float64) ([]float64, error) {
	n, _ := x.Dims()
	r.rows.Store(n, true)
	g, err := r.rfKernelModel.JacobianTVec(ctx, x, a)
	if _, err := (rfRounded{calls: r.calls}).round(mat.NewDense(len(g), 1, g), err); err != nil {
		return nil, err
	}
	return g, nil
}

// Lazy's penalty search at scale (the subsample's dense cross-validation)
// uses the model's single-precision kernel unless DoublePrecision is set;
// with it, or on a model without one, the search is today's, bit for bit,
// and the dense path (problems below the scale threshold) never uses it.
// With it, the folds' updates are Phi^T a over all the subsample's rows (a
// zero on the fold's), and the penalty is the double search's to within
// what Brent's method locates a minimum to (2 tol each: the CV errors
// differ by float32's rounding, relative ~1e-7, which moves the
// parabolic steps, not the minimum).
func TestLazySingleSearch(t *testing.T) {
	ctx := context.Background()
	r := newRF(4, 150, 3)
	plain := rfKernelModel{r}
	single := rfSingleKernelModel{plain, new(atomic.Int64), new(sync.Map)}
	p := problemFor(t, plain, 120, 40, 4, 21)
	ps := *p
	ps.Full = single
	f := framework.Feature{Name: "x1", Columns: []int{0}}
	reduce := func(lz Estimator, p *framework.Problem) framework.Reduced {
		t.Helper()
		red, err := lz.Reduce(ctx, p, f)
		if err != nil {
			t.Fatal(err)
		}
		return red
	}
	same := func(a, b framework.Reduced) bool {
		return mat.Equal(a.Pred, b.Pred) && a.Stats[statLambda] == b.Stats[statLambda]
	}
	for _, lz := range []Estimator{{Folds: 3}, {Folds: 3, Memory: tinyMemory, DoublePrecision: true}} {
		want := reduce(lz, p)
		if got := reduce(lz, &ps); !same(got, want) {
			t.Errorf("memory %d double %v: the single-kernel model's lambda %v, the plain one's %v (or the predictions differ)",
				lz.Memory, lz.DoublePrecision, got.Stats[statLambda], want.Stats[statLambda])
		}
		if n := single.calls.Load(); n > 0 {
			t.Errorf("memory %d double %v: %d single-precision kernel calls", lz.Memory, lz.DoublePrecision, n)
		}
	}
	lz := Estimator{Folds: 3, Memory: tinyMemory}
	double := reduce(lz, p)
	if got := reduce(Estimator{Folds: 3, Memory: tinyMemory, DoublePrecision: true}, p); !same(got, double) {
		t.Error("a model without a single-precision kernel: lazy-precision single differs from double")
	}
	got := reduce(lz, &ps)
	if single.calls.Load() == 0 {
		t.Fatal("lazy-precision single: no single-precision kernel calls")
	}
	single.rows.Range(func(k, _ any) bool {
		if k.(int) != 120 {
			t.Errorf("a fold's Phi^T a on %d rows, want all 120", k)
		}
		return true
	})
	da, sa := double.Stats[statLambda], got.Stats[statLambda]
	if math.IsInf(da, 1) {
		t.Fatal("no update chosen: the check would prove nothing")
	}
	if d := math.Abs(math.Log10(sa / da)); !(d <= 4*defaultSubsampleTol) {
		t.Errorf("penalty: double %v, single %v: %.3g decades apart", da, sa, d)
	}
	t.Logf("penalty: double %v, single %v", da, sa)
}
