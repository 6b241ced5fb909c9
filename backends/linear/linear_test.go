package linear

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

func randX(rng *rand.Rand, n, p int) *mat.Dense {
	x := mat.NewDense(n, p, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			x.Set(i, j, 3*rng.NormFloat64()+float64(j))
		}
	}
	return x
}

func fit(t testing.TB, task framework.Task, x *mat.Dense, y []float64, opts map[string]string) *Model {
	t.Helper()
	_, p := x.Dims()
	md, err := NewModel(framework.ModelSpec{Task: task, Inputs: p, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if err := md.Fit(context.Background(), x, y); err != nil {
		t.Fatal(err)
	}
	return md
}

// withIntercept returns [1, x].
func withIntercept(x *mat.Dense) *mat.Dense {
	n, p := x.Dims()
	d := mat.NewDense(n, p+1, nil)
	for i := 0; i < n; i++ {
		d.Set(i, 0, 1)
		for j := 0; j < p; j++ {
			d.Set(i, j+1, x.At(i, j))
		}
	}
	return d
}

func close(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestOLSAgainstNormalEquations compares coefficients and standard errors
// with the textbook formulas on the input scale: beta = (X^T X)^-1 X^T y,
// Cov = sigma^2 (X^T X)^-1, sigma^2 = RSS / (n - p - 1).
func TestOLSAgainstNormalEquations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, p := 200, 4
	x := randX(rng, n, p)
	beta := []float64{0.5, -2, 1, 0, 3}
	y := make([]float64, n)
	for i := range y {
		y[i] = beta[0] + 0.7*rng.NormFloat64()
		for j := 0; j < p; j++ {
			y[i] += beta[j+1] * x.At(i, j)
		}
	}
	md := fit(t, framework.Regression, x, y, nil)
	c, err := md.Coefficients()
	if err != nil {
		t.Fatal(err)
	}

	d := withIntercept(x)
	var xtx, inv mat.Dense
	xtx.Mul(d.T(), d)
	if err := inv.Inverse(&xtx); err != nil {
		t.Fatal(err)
	}
	var b mat.VecDense
	b.MulVec(d.T(), mat.NewVecDense(n, y))
	b.MulVec(&inv, mat.VecDenseCopyOf(&b))
	var fitv mat.VecDense
	fitv.MulVec(d, &b)
	rss := 0.0
	for i := range y {
		rss += (y[i] - fitv.AtVec(i)) * (y[i] - fitv.AtVec(i))
	}
	s2 := rss / float64(n-p-1)
	if !close(c.Sigma2, s2, 1e-10) || c.DF != float64(n-p-1) || c.Rank != p+1 {
		t.Errorf("sigma2 %v df %v rank %d, want %v %v %d", c.Sigma2, c.DF, c.Rank, s2, n-p-1, p+1)
	}
	if !close(c.Intercept, b.AtVec(0), 1e-10) || !close(c.InterceptSE, math.Sqrt(s2*inv.At(0, 0)), 1e-8) {
		t.Errorf("intercept %v (se %v), want %v (se %v)", c.Intercept, c.InterceptSE, b.AtVec(0), math.Sqrt(s2*inv.At(0, 0)))
	}
	for j := 0; j < p; j++ {
		if !close(c.Slopes[j], b.AtVec(j+1), 1e-10) {
			t.Errorf("slope %d: want %v, got %v", j, b.AtVec(j+1), c.Slopes[j])
		}
		if se := math.Sqrt(s2 * inv.At(j+1, j+1)); !close(c.SlopeSE[j], se, 1e-8) {
			t.Errorf("se %d: want %v, got %v", j, se, c.SlopeSE[j])
		}
	}
	// Predictions are the fitted values.
	pred, err := md.Predict(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if !close(pred.At(i, 0), fitv.AtVec(i), 1e-10) {
			t.Fatalf("row %d: want %v, got %v", i, fitv.AtVec(i), pred.At(i, 0))
		}
	}
}

// TestRankDeficient: a constant column (what retrain's dropped data looks
// like) and a column that duplicates another are aliased, and the fit is
// the fit without them.
func TestRankDeficient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 100
	base := randX(rng, n, 2)
	x := mat.NewDense(n, 4, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		a, b := base.At(i, 0), base.At(i, 1)
		x.SetRow(i, []float64{a, 0, b, 2*a - 1}) // column 1 constant, column 3 = 2 col 0 - 1
		y[i] = 1 + a - b + 0.1*rng.NormFloat64()
	}
	md := fit(t, framework.Regression, x, y, nil)
	c, _ := md.Coefficients()
	if c.Rank != 3 || !c.Aliased[1] || c.Aliased[0] == c.Aliased[3] || c.Aliased[2] {
		t.Fatalf("rank %d aliased %v; want rank 3, column 1 and one of 0, 3 aliased", c.Rank, c.Aliased)
	}
	if !math.IsNaN(c.SlopeSE[1]) || c.Slopes[1] != 0 {
		t.Errorf("aliased column: slope %v se %v, want 0 and NaN", c.Slopes[1], c.SlopeSE[1])
	}
	ref := fit(t, framework.Regression, base, y, nil)
	p1, _ := md.Predict(context.Background(), x)
	p2, _ := ref.Predict(context.Background(), base)
	if !mat.EqualApprox(p1, p2, 1e-10) {
		t.Errorf("aliased fit differs from the fit on the independent columns")
	}
	rc, _ := ref.Coefficients()
	if !close(c.SlopeSE[2], rc.SlopeSE[1], 1e-8) || !close(c.Sigma2, rc.Sigma2, 1e-10) {
		t.Errorf("standard errors differ from the reduced fit: %v vs %v", c.SlopeSE[2], rc.SlopeSE[1])
	}
}

// TestRidge compares with the closed form theta = (Z^T Z + a D)^-1 Z^T y on
// the standardised inputs, and checks the sandwich covariance.
func TestRidge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n, p := 80, 3
	x := randX(rng, n, p)
	y := make([]float64, n)
	for i := range y {
		y[i] = x.At(i, 0) - x.At(i, 2) + rng.NormFloat64()
	}
	const alpha = 7.5
	md := fit(t, framework.Regression, x, y, map[string]string{"ridge": "7.5"})
	z := mat.NewDense(n, p+1, md.design(x.RawMatrix(), nil).Data)
	var a mat.SymDense
	a.SymOuterK(1, z.T())
	for k := 1; k <= p; k++ {
		a.SetSym(k, k, a.At(k, k)+alpha)
	}
	var ch mat.Cholesky
	if !ch.Factorize(&a) {
		t.Fatal("not positive definite")
	}
	var zty, th mat.VecDense
	zty.MulVec(z.T(), mat.NewVecDense(n, y))
	if err := ch.SolveVecTo(&th, &zty); err != nil {
		t.Fatal(err)
	}
	for k := 0; k <= p; k++ {
		if !close(md.theta[k], th.AtVec(k), 1e-10) {
			t.Errorf("theta %d: want %v, got %v", k, th.AtVec(k), md.theta[k])
		}
	}
	var ainv, ztz, sand mat.Dense
	var ai mat.SymDense
	if err := ch.InverseTo(&ai); err != nil {
		t.Fatal(err)
	}
	ainv.CloneFrom(&ai)
	ztz.Mul(z.T(), z)
	sand.Product(&ainv, &ztz, &ainv)
	var hat mat.Dense
	hat.Mul(&ainv, &ztz)
	df := float64(n) - mat.Trace(&hat)
	if !close(md.df, df, 1e-10) {
		t.Errorf("df: want %v, got %v", df, md.df)
	}
	for i := 0; i <= p; i++ {
		for j := 0; j <= p; j++ {
			if want := md.sigma2 * sand.At(i, j); !close(md.cov[i*(p+1)+j], want, 1e-8) {
				t.Fatalf("cov[%d,%d]: want %v, got %v", i, j, want, md.cov[i*(p+1)+j])
			}
		}
	}
}

// TestLogistic checks the score equations Z^T (y - p) = ridge D theta at
// the estimate, the covariance (the inverse Fisher information), and
// recovery of known coefficients.
func TestLogistic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	n, p := 3000, 3
	x := mat.NewDense(n, p, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
		eta := -0.5 + 1.5*x.At(i, 0) - x.At(i, 1)
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			y[i] = 1
		}
	}
	for _, ridge := range []string{"0", "3"} {
		md := fit(t, framework.Binary, x, y, map[string]string{"ridge": ridge})
		r := md.cfg.ridge
		z := md.design(x.RawMatrix(), nil)
		pred, _ := md.Predict(context.Background(), x)
		for k := 0; k <= p; k++ {
			g := 0.0
			for i := 0; i < n; i++ {
				g += z.Data[i*(p+1)+k] * (y[i] - pred.At(i, 0))
			}
			if k > 0 {
				g -= r * md.theta[k]
			}
			if math.Abs(g) > 1e-6 {
				t.Errorf("ridge %s: score %d = %v, want 0", ridge, k, g)
			}
		}
		c, _ := md.Coefficients()
		want := []float64{1.5, -1, 0}
		for j, w := range want {
			if math.Abs(c.Slopes[j]-w) > 4*c.SlopeSE[j]+r*0.01 {
				t.Errorf("ridge %s: slope %d = %v (se %v), want about %v", ridge, j, c.Slopes[j], c.SlopeSE[j], w)
			}
		}
		if math.Abs(c.Intercept+0.5) > 4*c.InterceptSE {
			t.Errorf("ridge %s: intercept %v (se %v), want about -0.5", ridge, c.Intercept, c.InterceptSE)
		}
		// Fisher information Z^T W Z + ridge D against the covariance.
		var info mat.Dense
		zd := mat.NewDense(n, p+1, z.Data)
		w := make([]float64, n)
		for i := range w {
			w[i] = pred.At(i, 0) * (1 - pred.At(i, 0))
		}
		var wz mat.Dense
		wz.Apply(func(i, j int, v float64) float64 { return w[i] * v }, zd)
		info.Mul(zd.T(), &wz)
		for k := 1; k <= p; k++ {
			info.Set(k, k, info.At(k, k)+r)
		}
		var prod mat.Dense
		prod.Mul(&info, mat.NewDense(p+1, p+1, md.cov))
		if !mat.EqualApprox(&prod, eye(p+1), 1e-6) {
			t.Errorf("ridge %s: Cov * information = %v, want I", ridge, mat.Formatted(&prod))
		}
	}
}

func eye(n int) *mat.Dense {
	d := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		d.Set(i, i, 1)
	}
	return d
}

func TestSeparatedDataWithoutRidge(t *testing.T) {
	x := mat.NewDense(6, 1, []float64{-3, -2, -1, 1, 2, 3})
	y := []float64{0, 0, 0, 1, 1, 1}
	md, _ := NewModel(framework.ModelSpec{Task: framework.Binary, Inputs: 1, Options: map[string]string{"maxiter": "5"}})
	err := md.Fit(context.Background(), x, y)
	if err == nil || !contains(err.Error(), "ridge") {
		t.Fatalf("want a non-convergence error suggesting ridge, got %v", err)
	}
	// A ridge penalty makes it well posed.
	fit(t, framework.Binary, x, y, map[string]string{"ridge": "1"})
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestOptionsAndInputs(t *testing.T) {
	for _, opts := range []map[string]string{
		{"ridge": "-1"}, {"ridge": "x"}, {"ridge": "NaN"}, {"maxiter": "0"}, {"hidden": "5"},
	} {
		if _, err := (Backend{}).New(context.Background(), framework.ModelSpec{Inputs: 2, Options: opts}); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("options %v: want a usage error, got %v", opts, err)
		}
	}
	md, _ := NewModel(framework.ModelSpec{Inputs: 2})
	if _, err := md.Predict(context.Background(), mat.NewDense(1, 2, nil)); err == nil {
		t.Error("Predict before Fit: want an error")
	}
	if err := md.Fit(context.Background(), mat.NewDense(3, 3, nil), []float64{1, 2, 3}); err == nil {
		t.Error("wrong column count: want an error")
	}
	bin, _ := NewModel(framework.ModelSpec{Task: framework.Binary, Inputs: 1})
	if err := bin.Fit(context.Background(), mat.NewDense(2, 1, []float64{1, 2}), []float64{0, 2}); !errors.Is(err, framework.ErrUsage) {
		t.Errorf("binary response 2: want a usage error, got %v", err)
	}
}

// TestInputsUnmodified: Fit and the prediction methods read x in place.
func TestInputsUnmodified(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x := randX(rng, 30, 3)
	keep := mat.DenseCopyOf(x)
	y := make([]float64, 30)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	md := fit(t, framework.Regression, x, y, nil)
	ctx := context.Background()
	md.Predict(ctx, x)
	md.Jacobian(ctx, x)
	md.Kernel(ctx, x, nil)
	md.JacobianTVec(ctx, x, y)
	md.PredictShifted(ctx, x, make([]float64, 4))
	if !mat.Equal(x, keep) {
		t.Fatal("input modified")
	}
}

func BenchmarkFitOLS(b *testing.B) {
	for _, sz := range []struct {
		name string
		n, p int
	}{{"n=5000,p=100", 5000, 100}, {"n=1000,p=10", 1000, 10}} {
		b.Run(sz.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			x := randX(rng, sz.n, sz.p)
			y := make([]float64, sz.n)
			for i := range y {
				y[i] = x.At(i, 0) + rng.NormFloat64()
			}
			b.ResetTimer()
			for range b.N {
				md, _ := NewModel(framework.ModelSpec{Inputs: sz.p})
				if err := md.Fit(context.Background(), x, y); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
