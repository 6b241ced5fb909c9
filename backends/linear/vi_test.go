package linear_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// prepare sets up the paper's linear setting with the OLS backend.
func prepare(t *testing.T, n int, rho float64, seed int64) *framework.Problem {
	t.Helper()
	sim, err := simulate.Linear(n, rho, seed)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{
		Backend: linear.Backend{}, BackendName: "linear", Seed: seed,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func reduce(t *testing.T, e framework.Estimator, p *framework.Problem, f framework.Feature) framework.Reduced {
	t.Helper()
	r, err := e.Reduce(context.Background(), p, f)
	if err != nil {
		t.Fatalf("%s, %s: %v", e.Name(), f.Name, err)
	}
	return r
}

// TestLazyIsRetrainForOLS: OLS is its own linearisation, so lazy's ridge
// regression of the full model's residuals on its gradient features (the
// standardised inputs and the intercept) with a vanishing penalty is OLS
// refitted on the dropped data, which is what retrain computes. The reduced
// predictions agree to rounding error.
func TestLazyIsRetrainForOLS(t *testing.T) {
	p := prepare(t, 3000, 0.9, 11)
	// A penalty 1e-10 times the scale of the Gram's diagonal (p+1 for
	// standardised inputs and an intercept).
	est := lazy.Estimator{Lambda: 1e-10 * float64(len(p.FeatureNames)+1)}
	yScale := stat.StdDev(p.YEval, nil)
	for _, f := range p.Features() {
		lz := reduce(t, est, p, f)
		rt := reduce(t, estimators.Retrain{}, p, f)
		d := maxAbsDiff(lz.Pred, rt.Pred)
		t.Logf("feature %s: lambda %.3g, lazy and retrain differ by %.3g; dropout by %.3g", f.Name, lz.Stats["lambda"], d,
			maxAbsDiff(reduce(t, estimators.Dropout{}, p, f).Pred, rt.Pred))
		if d > 1e-9*yScale {
			t.Errorf("feature %s: lazy and retrain predictions differ by %.3g (response sd %.3g)", f.Name, d, yScale)
		}
	}
}

// TestLazyTakesRefitPenalty: lazy without a fixed penalty on least squares
// with a cross-validated ridge takes the model's penalty (RefitPenalty)
// instead of searching one, and its reduced model is retrain's (the ridge
// refit) up to the penalty's pull towards the full model's parameters, of
// the order of the penalty over the rows: on the paper's linear setting
// (n 3000, x1 and x2 correlated at 0.9, three nulls) within 1e-3 of the
// response's sd, where the cross-validated penalty of the search left the
// correlated features' predictions far from retrain's.
func TestLazyTakesRefitPenalty(t *testing.T) {
	sim, err := simulate.Linear(3000, 0.9, 12)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: linear.Backend{}, BackendName: "linear", Seed: 12,
		Options: map[string]string{"ridge": linear.RidgeAuto}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ridge, ok := p.Full.(framework.RefitPenalizer).RefitPenalty()
	if !ok || !(ridge > 0) {
		t.Fatalf("refit penalty %g, %v", ridge, ok)
	}
	yScale := stat.StdDev(p.YEval, nil)
	for _, f := range p.Features() {
		lz := reduce(t, lazy.Estimator{}, p, f)
		rt := reduce(t, estimators.Retrain{}, p, f)
		diff := maxAbsDiff(lz.Pred, rt.Pred)
		t.Logf("feature %s: lambda %.3g (the model's ridge %.3g), lazy and retrain differ by %.3g", f.Name, lz.Stats["lambda"], ridge, diff)
		if lz.Stats["lambda"] != ridge || diff > 1e-3*yScale {
			t.Errorf("feature %s: lambda %g, want the model's ridge %g; predictions %.3g from retrain's (response sd %.3g)", f.Name, lz.Stats["lambda"], ridge, diff, yScale)
		}
	}
}

func maxAbsDiff(a, b mat.Matrix) float64 {
	r, _ := a.Dims()
	d := 0.0
	for i := 0; i < r; i++ {
		d = math.Max(d, math.Abs(a.At(i, 0)-b.At(i, 0)))
	}
	return d
}

// TestProposition31 checks Proposition 3.1 of the paper on the linear
// setting (Sigma = I but Corr(x1, x2) = rho, beta = (1.5, 1.2, 1, 0, 0, 0)):
// the OLS dropout VI estimates beta_j^2 Sigma_jj, the retrain VI
// beta_j^2 (Sigma_jj - gamma_j^T Sigma_(j)^-1 gamma_j), and their difference
// the proposition's
//
//	gamma^T S^-1 gamma / (Sigma_jj - gamma^T S^-1 gamma)^2 *
//	    [E(X_j Y) - gamma^T S^-1 E(X_-j Y)]^2,
//
// each within 3 standard errors (of the per-sample loss differences on the
// evaluation split).
func TestProposition31(t *testing.T) {
	beta := []float64{1.5, 1.2, 1, 0, 0, 0}
	for _, rho := range []float64{0.5, 0.9} {
		t.Run(fmt.Sprintf("rho=%g", rho), func(t *testing.T) {
			prob := prepare(t, 6000, rho, 3)
			pp := len(beta)
			sigma := mat.NewSymDense(pp, nil)
			for i := 0; i < pp; i++ {
				sigma.SetSym(i, i, 1)
			}
			sigma.SetSym(0, 1, rho)
			var exy mat.VecDense // E(X Y) = Sigma beta
			exy.MulVec(sigma, mat.NewVecDense(pp, beta))
			full := losses(prob, prob.FullEval)
			for j, f := range prob.Features() {
				// gamma_j, Sigma_(j) and gamma^T Sigma_(j)^-1 gamma.
				rest := others(pp, j)
				gamma := mat.NewVecDense(pp-1, nil)
				sj := mat.NewSymDense(pp-1, nil)
				exyRest := mat.NewVecDense(pp-1, nil)
				for a, ia := range rest {
					gamma.SetVec(a, sigma.At(j, ia))
					exyRest.SetVec(a, exy.AtVec(ia))
					for b, ib := range rest {
						sj.SetSym(a, b, sigma.At(ia, ib))
					}
				}
				var ch mat.Cholesky
				if !ch.Factorize(sj) {
					t.Fatal("Sigma_(j) not positive definite")
				}
				var sg mat.VecDense
				if err := ch.SolveVecTo(&sg, gamma); err != nil {
					t.Fatal(err)
				}
				q := mat.Dot(gamma, &sg)
				sjj := sigma.At(j, j)
				wantDR := beta[j] * beta[j] * sjj
				wantRT := beta[j] * beta[j] * (sjj - q)
				bracket := exy.AtVec(j) - mat.Dot(&sg, exyRest)
				wantDiff := q / ((sjj - q) * (sjj - q)) * bracket * bracket

				dr := losses(prob, reduce(t, estimators.Dropout{}, prob, f).Pred)
				rt := losses(prob, reduce(t, estimators.Retrain{}, prob, f).Pred)
				check := func(what string, a, b []float64, want float64) {
					d := make([]float64, len(a))
					for i := range d {
						d[i] = a[i] - b[i]
					}
					est := stat.Mean(d, nil)
					se := stat.StdDev(d, nil) / math.Sqrt(float64(len(d)))
					z := (est - want) / se
					t.Logf("%s %s: %.4f (se %.4f), closed form %.4f, z %+.2f", f.Name, what, est, se, want, z)
					if !(math.Abs(est-want) <= 3*se) {
						t.Errorf("%s %s: %.4f (se %.4f), want %.4f within 3 se", f.Name, what, est, se, want)
					}
				}
				check("dropout VI", dr, full, wantDR)
				check("retrain VI", rt, full, wantRT)
				check("dropout - retrain", dr, rt, wantDiff)
				if math.Abs(wantDiff-(wantDR-wantRT)) > 1e-12 {
					t.Errorf("%s: the proposition's difference %.6g is not beta^2 gamma^T S^-1 gamma = %.6g", f.Name, wantDiff, wantDR-wantRT)
				}
			}
		})
	}
}

// losses returns the squared errors of pred on the evaluation split.
func losses(p *framework.Problem, pred *mat.Dense) []float64 {
	out := make([]float64, len(p.YEval))
	for i, y := range p.YEval {
		d := y - pred.At(i, 0)
		out[i] = d * d
	}
	return out
}

func others(p, j int) []int {
	var out []int
	for k := 0; k < p; k++ {
		if k != j {
			out = append(out, k)
		}
	}
	return out
}
