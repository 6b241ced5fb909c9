package linear

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/lazyvi/lazyvi/framework"
)

// TestRidgeDualMatchesPrimal: the n-dimensional dual gives the primal
// augmented QR's coefficients and hat-matrix trace, for an unweighted
// intercept column (OLS) and a weighted one (a Newton step of logistic
// regression).
func TestRidgeDualMatchesPrimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	const m, q, ridge = 12, 31, 0.7
	for _, weighted := range []bool{false, true} {
		a := blas64.General{Rows: m, Cols: q, Stride: q, Data: make([]float64, m*q)}
		b := make([]float64, m)
		for i := 0; i < m; i++ {
			w := 1.0
			if weighted {
				w = 0.2 + rng.Float64()
			}
			a.Data[i*q] = w
			for k := 1; k < q; k++ {
				a.Data[i*q+k] = w * rng.NormFloat64()
			}
			b[i] = rng.NormFloat64()
		}
		aug := blas64.General{Rows: m + q - 1, Cols: q, Stride: q, Data: make([]float64, (m+q-1)*q)}
		copy(aug.Data, a.Data)
		for k := 1; k < q; k++ {
			aug.Data[(m+k-1)*q+k] = math.Sqrt(ridge)
		}
		bb := append(append([]float64(nil), b...), make([]float64, q-1)...)
		primal := solveLS(aug, bb)

		dual, tr, ok := solveRidgeDual(a, b, ridge, true)
		if !ok {
			t.Fatalf("weighted %v: the dual system is not positive definite", weighted)
		}
		for k := range dual {
			if !close(dual[k], primal.theta[k], 1e-9) {
				t.Errorf("weighted %v: theta[%d] dual %v, primal %v", weighted, k, dual[k], primal.theta[k])
			}
		}
		if weighted {
			continue
		}
		// trace(H) = q - ridge trace(D A^-1), A^-1 the primal's.
		ainv := primal.unscaledCov()
		want := float64(q)
		for k := 1; k < q; k++ {
			want -= ridge * ainv[k*q+k]
		}
		if !close(tr, want, 1e-9) {
			t.Errorf("trace of the hat matrix: dual %v, primal %v", tr, want)
		}
	}
}

// TestWideFitIsCheap: 20 rows and 2000 inputs fit, with and without a
// ridge penalty, for OLS and logistic regression, in a fraction of a
// second and a few MB (the primal QR of (n+p) x (p+1) and the (p+1)^2
// covariance took O(p^3) time and O(p^2) memory: 3.2 GB at p 20000); the
// fit interpolates no worse than the intercept, and the standard errors
// are NaN.
func TestWideFitIsCheap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, p = 20, 2000
	x := randX(rng, n, p)
	y, yb := make([]float64, n), make([]float64, n)
	for i := range y {
		y[i] = x.At(i, 0) + rng.NormFloat64()
		if x.At(i, 1)+rng.NormFloat64() > 1 {
			yb[i] = 1
		}
	}
	for _, c := range []struct {
		task  framework.Task
		y     []float64
		ridge string
	}{{framework.Regression, y, "1"}, {framework.Regression, y, "0"}, {framework.Binary, yb, "1"}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		m := fit(t, c.task, x, c.y, map[string]string{"ridge": c.ridge})
		secs := time.Since(start).Seconds()
		runtime.ReadMemStats(&after)
		if mb := float64(after.TotalAlloc-before.TotalAlloc) / 1e6; mb > 20 || secs > 2 {
			t.Errorf("%v ridge %s: %.1f MB allocated in %.2f s; want at most 20 MB and 2 s", c.task, c.ridge, mb, secs)
		}
		co, err := m.Coefficients()
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(co.SlopeSE[0]) || !math.IsNaN(co.InterceptSE) {
			t.Errorf("%v ridge %s: standard errors %v, %v; want NaN", c.task, c.ridge, co.SlopeSE[0], co.InterceptSE)
		}
		pred, err := m.Predict(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		if c.task == framework.Regression {
			mean, sse, sst := 0.0, 0.0, 0.0
			for _, v := range y {
				mean += v / n
			}
			for i, v := range y {
				sse += (v - pred.At(i, 0)) * (v - pred.At(i, 0))
				sst += (v - mean) * (v - mean)
			}
			if !(sse < sst) {
				t.Errorf("ridge %s: train SSE %v not below the intercept's %v", c.ridge, sse, sst)
			}
		}
		st, err := m.SaveState(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m2, _ := NewModel(framework.ModelSpec{Task: c.task, Inputs: p, Options: map[string]string{"ridge": c.ridge}})
		if err := m2.LoadState(context.Background(), st); err != nil {
			t.Errorf("%v ridge %s: saved state does not load: %v", c.task, c.ridge, err)
		}
	}
}
