package shapley

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
)

// ols is a test backend: least squares with an intercept (a tiny ridge
// keeps the columns a reduced model zeroes at coefficient 0). With it,
// retrain's reduced model on S is the OLS fit on S, which converges to
// E[y | x_S] for a Gaussian linear model.
type ols struct{}

func (ols) Capabilities() framework.Capabilities { return framework.Capabilities{} }
func (ols) Options() []framework.OptionInfo      { return nil }
func (ols) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &olsModel{}, nil
}

type olsModel struct{ coef []float64 }

func (m *olsModel) Fit(_ context.Context, x mat.Matrix, y []float64) error {
	n, p := x.Dims()
	d := mat.NewDense(n, p+1, nil)
	for i := range n {
		d.Set(i, 0, 1)
		for j := range p {
			d.Set(i, j+1, x.At(i, j))
		}
	}
	var g mat.SymDense
	g.SymOuterK(1, d.T())
	for j := range p + 1 {
		g.SetSym(j, j, g.At(j, j)+1e-9)
	}
	var b mat.VecDense
	b.MulVec(d.T(), mat.NewVecDense(n, y))
	var ch mat.Cholesky
	ch.Factorize(&g)
	var c mat.VecDense
	if err := ch.SolveVecTo(&c, &b); err != nil {
		return err
	}
	m.coef = c.RawVector().Data
	return nil
}

func (m *olsModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	n, p := x.Dims()
	out := mat.NewDense(n, 1, nil)
	for i := range n {
		v := m.coef[0]
		for j := range p {
			v += m.coef[j+1] * x.At(i, j)
		}
		out.Set(i, 0, v)
	}
	return out, nil
}

// The Gaussian linear model of the exact test: x ~ N(0, Sigma), y = beta'x
// + eps, eps ~ N(0, sigma2). x4 has no coefficient but is correlated with
// x3, so its Shapley value is positive.
var (
	linBeta  = []float64{1, 0.5, 0.8, 0}
	linSigma = mat.NewSymDense(4, []float64{
		1, 0.7, 0.2, 0,
		0.7, 1, 0, 0,
		0.2, 0, 1, -0.5,
		0, 0, -0.5, 1,
	})
	linNoise = 0.6
)

// linearR2 is the population R² of E[y | x_S]: beta' Sigma_{.S}
// Sigma_SS^-1 Sigma_{S.} beta / Var(y).
func linearR2(mask uint32) float64 {
	p := len(linBeta)
	b := mat.NewVecDense(p, linBeta)
	var sb mat.VecDense
	sb.MulVec(linSigma, b) // Cov(x, y)
	vy := mat.Dot(b, &sb) + linNoise
	var idx []int
	for j := range p {
		if mask&(1<<j) != 0 {
			idx = append(idx, j)
		}
	}
	if len(idx) == 0 {
		return 0
	}
	ss := mat.NewSymDense(len(idx), nil)
	c := mat.NewVecDense(len(idx), nil)
	for a, i := range idx {
		c.SetVec(a, sb.AtVec(i))
		for bb, j := range idx {
			ss.SetSym(a, bb, linSigma.At(i, j))
		}
	}
	var ch mat.Cholesky
	ch.Factorize(ss)
	var w mat.VecDense
	ch.SolveVecTo(&w, c)
	return mat.Dot(c, &w) / vy
}

func linearData(n int, seed int64) *framework.Dataset {
	p := len(linBeta)
	var ch mat.Cholesky
	ch.Factorize(linSigma)
	var l mat.TriDense
	ch.LTo(&l)
	rng := rand.New(rand.NewPCG(uint64(seed), 11))
	x := mat.NewDense(n, p+1, nil)
	z := make([]float64, p)
	for i := range n {
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		y := math.Sqrt(linNoise) * rng.NormFloat64()
		for j := range p {
			v := 0.0
			for k := 0; k <= j; k++ {
				v += l.At(j, k) * z[k]
			}
			x.Set(i, j, v)
			y += linBeta[j] * v
		}
		x.Set(i, p, y)
	}
	return &framework.Dataset{Source: "linear", Names: []string{"x1", "x2", "x3", "x4", "y"}, X: x}
}

func olsProblem(t *testing.T, n int, seed int64) *framework.Problem {
	t.Helper()
	prob, err := framework.Prepare(context.Background(), linearData(n, seed),
		framework.Config{Backend: ols{}, BackendName: "ols", Seed: seed, TrainFrac: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	return prob
}

// TestLinearR2Exact checks the closed-form Shapley values of R² (by
// enumerating the 16 subsets of the population model) against the
// estimator with OLS reduced models, and the standard errors' calibration
// over repetitions: the z-scores (estimate - truth)/se must have mean 0 and
// standard deviation 1 within Monte Carlo error, both with every subset
// (influence variance only) and with sampled subsets (plus the sampling
// variance).
func TestLinearR2Exact(t *testing.T) {
	truth, err := Definition(4, linearR2)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, v := range truth {
		sum += v
	}
	if math.Abs(sum-linearR2(15)) > 1e-12 {
		t.Fatalf("truth sums to %v, R² of the full model is %v", sum, linearR2(15))
	}
	t.Logf("population Shapley values of R²: %.4f (sum %.4f)", truth, sum)
	if truth[3] <= 0.01 {
		t.Fatalf("x4's Shapley value %v should be clearly positive", truth[3])
	}
	m := measures.R2()
	for _, tc := range []struct {
		name  string
		exact bool
		draws int
	}{{"exact", true, 0}, {"sampled", false, 100}} {
		t.Run(tc.name, func(t *testing.T) {
			const reps = 200
			zs := make([][]float64, 4)
			for r := range reps {
				prob := olsProblem(t, 1000, int64(r+1))
				var plan *Plan
				if tc.exact {
					plan, err = NewPlan(4, 0, true, prob.Seed)
				} else {
					plan = sampledPlan(t, 4, tc.draws, prob.Seed)
				}
				if err != nil {
					t.Fatal(err)
				}
				est, err := Estimate(context.Background(), prob, m, plan, estimators.Retrain{}, Options{Workers: 1})
				if err != nil {
					t.Fatal(err)
				}
				s := 0.0
				for j, res := range est.Results {
					zs[j] = append(zs[j], (res.VI-truth[j])/res.SE)
					s += res.VI
					if tc.exact && res.SESampling != 0 {
						t.Fatalf("exact: sampling se %v", res.SESampling)
					}
				}
				if d := est.Full.Value - est.Empty.Value; math.Abs(s-d) > 1e-12 {
					t.Fatalf("efficiency: values sum to %v, V(full) - V(empty) = %v", s, d)
				}
				if r == 0 {
					for j, res := range est.Results {
						t.Logf("rep 1: %s %.4f se %.4f (influence %.4f, sampling %.4f), truth %.4f",
							res.Feature, res.VI, res.SE, res.SEInfluence, res.SESampling, truth[j])
					}
				}
			}
			for j, z := range zs {
				mean, sd := stat.MeanStdDev(z, nil)
				t.Logf("x%d: z-score mean %.3f, sd %.3f over %d repetitions", j+1, mean, sd, reps)
				// Mean within 4 Monte Carlo SEs (sd/sqrt(reps)) of 0 plus
				// an allowance for the O(1/n) bias of R² from estimated
				// regressions; sd within [0.8, 1.25] (the sd of an sd from
				// 200 normal draws is 0.05).
				if math.Abs(mean) > 4/math.Sqrt(reps)+0.15 {
					t.Errorf("x%d: mean z-score %.3f", j+1, mean)
				}
				if sd < 0.8 || sd > 1.25 {
					t.Errorf("x%d: z-score sd %.3f, want about 1", j+1, sd)
				}
			}
		})
	}
}

// TestWorkersDeterministic: the result does not depend on the number of
// workers.
func TestWorkersDeterministic(t *testing.T) {
	prob := olsProblem(t, 600, 5)
	plan, err := NewPlan(4, 40, false, 5)
	if err != nil {
		t.Fatal(err)
	}
	var first *Estimation
	for _, w := range []int{1, 3, 8} {
		est, err := Estimate(context.Background(), prob, measures.MSE(), plan, estimators.Retrain{}, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = est
			continue
		}
		for j := range est.Results {
			a, b := first.Results[j], est.Results[j]
			if a.VI != b.VI || a.SE != b.SE {
				t.Errorf("workers %d: %s %v±%v, with 1 worker %v±%v", w, a.Feature, b.VI, b.SE, a.VI, a.SE)
			}
		}
	}
}

func TestEstimateErrors(t *testing.T) {
	prob := olsProblem(t, 200, 1)
	plan, _ := NewPlan(3, 10, false, 1)
	if _, err := Estimate(context.Background(), prob, measures.MSE(), plan, estimators.Retrain{}, Options{}); err == nil {
		t.Error("plan for 3 features on 4: no error")
	}
	plan, _ = NewPlan(4, 10, false, 1)
	if _, err := Estimate(context.Background(), prob, measures.Accuracy(), plan, estimators.Retrain{}, Options{}); err == nil {
		t.Error("accuracy on a regression: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Estimate(ctx, prob, measures.MSE(), plan, estimators.Retrain{}, Options{}); err == nil {
		t.Error("cancelled context: no error")
	}
}
