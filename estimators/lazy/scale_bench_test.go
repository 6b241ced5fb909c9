package lazy

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// The stages of lazy at scale on the high-dimensional setting at n 10000
// with a (200, 100) network (n1 = 6667 train rows, M = 40401 parameters;
// the network trained for 20 epochs only, which changes the numbers little
// and the setup time much), feature x1:
//
//	go test -run X -bench 'Scale' ./estimators/lazy
//
// Flops:
//   - product: one Phi v and one Phi^T u on all train rows through the
//     memoised signals, 2 n1 M each: 1.08 GFLOP (counted, as the solver
//     counts them).
//   - search: the penalty's dense cross-validation on a subsample of
//     subsampleRows rows (kernel ns^2 (p + 2 (200 + 100) + 1) / 2 plus the
//     folds' Lanczos steps and shifted predictions).
//   - solve: the matrix-free Krylov solve at the chosen penalty, steps x
//     (4 n1 M + reorthogonalisation), reported as GFLOP/s on that count.
var scaleCase = scaleProblem{setting: "highdim", n: 10000, rho: 0.5}

// scaleLinear is the linear setting at n 20000 (p 6, M 21601), the size
// where retrain converges in a few epochs.
var scaleLinear = scaleProblem{setting: "linear", n: 20000, rho: 0.9}

type scaleProblem struct {
	setting string
	n       int
	rho     float64
	trained bool   // the MLP's default training, not 20 epochs
	hidden  string // the hidden layers; "200,100" when empty
	p       *framework.Problem
	once    sync.Once
	g       framework.Gradienter
	x       *mat.Dense
	t, e    []float64
	seed    int64
	err     error
}

func scaleGet(b *testing.B) { scaleCase.get(b) }

func (scaleCase *scaleProblem) get(b *testing.B) {
	scaleCase.once.Do(func() {
		sim, err := simulate.Generate(scaleCase.setting, scaleCase.n, scaleCase.rho, 1)
		if err != nil {
			scaleCase.err = err
			return
		}
		d := &dataio.Dataset{Source: scaleCase.setting, Names: sim.Names, X: sim.X}
		opts := map[string]string{"hidden": "200,100", "epochs": "20"}
		if scaleCase.hidden != "" {
			opts["hidden"] = scaleCase.hidden
		}
		if scaleCase.trained {
			delete(opts, "epochs")
		}
		p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 1, Options: opts})
		if err != nil {
			scaleCase.err = err
			return
		}
		scaleCase.p = p
		scaleCase.g = p.Full.(framework.Gradienter)
		scaleCase.t = p.YTrain
		scaleCase.seed = p.Seed
	})
	if scaleCase.err != nil {
		b.Fatal(scaleCase.err)
	}
	if scaleCase.x == nil {
		scaleCase.x, scaleCase.e = scaleCase.residuals(b, scaleCase.p.Features()[0])
	}
}

// residuals returns feature f's dropped train rows and the full model's
// residuals on them.
func (c *scaleProblem) residuals(b *testing.B, f framework.Feature) (*mat.Dense, []float64) {
	x := c.p.Drop(c.p.XTrain, f)
	base, err := c.g.Predict(context.Background(), x)
	if err != nil {
		b.Fatal(err)
	}
	e := make([]float64, len(c.t))
	floats.SubTo(e, c.t, base.RawMatrix().Data)
	return x, e
}

func BenchmarkScaleProduct(b *testing.B) {
	scaleGet(b)
	c := &scaleCase
	n1, m := len(c.e), c.g.NumParams()
	for _, single := range []bool{false, true} {
		name := "double"
		if single {
			name = "single"
		}
		b.Run(name, func(b *testing.B) {
			jm, _ := jacobian.MultiplierOf(c.g, single)
			op := &jacobianOp{ctx: context.Background(), jm: jm, x: c.x, n: n1, m: m}
			v, err := op.mul(c.e, true) // Phi^T e: a vector of the parameters
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]float64, m)
			b.ResetTimer()
			for b.Loop() {
				if err := op.mulVec(dst, v); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(4*float64(n1)*float64(m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkScaleSearch(b *testing.B) {
	scaleGet(b)
	c := &scaleCase
	var alpha float64
	for b.Loop() {
		var err error
		if alpha, err = testProblem(Estimator{}, c.g, c.x, c.t, c.e, c.seed).subsampleAlpha(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(math.Log10(alpha), "log10-alpha")
}

func BenchmarkScaleSolve(b *testing.B) {
	scaleGet(b)
	c := &scaleCase
	alpha, err := testProblem(Estimator{}, c.g, c.x, c.t, c.e, c.seed).subsampleAlpha(context.Background(), nil)
	if err != nil || math.IsInf(alpha, 1) {
		b.Fatalf("alpha %v, %v", alpha, err)
	}
	var flops float64
	var steps int
	b.ResetTimer()
	for b.Loop() {
		var err error
		if _, steps, flops, _, err = doubleProblem(c.g, c.x, c.e).solveMatrixFree(context.Background(), alpha, energyTol, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(steps), "steps")
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkScaleReduce is one whole feature (x1) at scale, both settings.
func BenchmarkScaleReduce(b *testing.B) {
	for _, c := range []*scaleProblem{&scaleCase, &scaleLinear} {
		b.Run(c.setting, func(b *testing.B) {
			c.get(b)
			f := c.p.Features()[0]
			b.ResetTimer()
			for b.Loop() {
				if _, err := (Estimator{}).Reduce(context.Background(), c.p, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// scaleDense is the high-dimensional setting at n 3000 (n1 2000), where the
// dense solve runs too.
var scaleDense = scaleProblem{setting: "highdim", n: 3000, rho: 0.5}

// BenchmarkScaleTolerance is the study behind energyTol: on features x1..x4
// of the high-dimensional setting at n 3000 (against the dense solve at the
// dense cross-validation's penalty) and x1 at n 10000 (against a tight
// matrix-free solve at the subsample's penalty), for each tolerance, the
// steps of the final solve and how far the evaluation VI (squared error)
// moves from the reference's, in units of its standard error.
func BenchmarkScaleTolerance(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		for _, c := range []*scaleProblem{&scaleDense, &scaleCase} {
			c.get(b)
			feats := c.p.Features()[:4]
			if c == &scaleCase {
				feats = feats[:1]
			}
			for _, f := range feats {
				x, e := c.residuals(b, f)
				var alpha float64
				var ref []float64
				if c == &scaleDense {
					red, err := (Estimator{}).Reduce(ctx, c.p, f)
					if err != nil {
						b.Fatal(err)
					}
					alpha = red.Stats[statLambda]
					if math.IsInf(alpha, 1) {
						fmt.Printf("n %d %s: no update\n", c.n, f.Name)
						continue
					}
					rp, err := testProblem(Estimator{}, c.g, x, nil, e, 0).newRidge(ctx, nil, false)
					if err != nil {
						b.Fatal(err)
					}
					sh, err := rp.solveAll(ctx, alpha)
					if err != nil {
						b.Fatal(err)
					}
					if ref = sh.DTheta; ref == nil {
						kern, _ := framework.As[framework.Kerneler](c.g)
						if ref, err = kern.JacobianTVec(ctx, sh.XTrain, sh.A); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					var err error
					if alpha, err = testProblem(Estimator{}, c.g, x, c.t, e, c.seed).subsampleAlpha(ctx, nil); err != nil {
						b.Fatal(err)
					}
					if ref, _, _, _, err = doubleProblem(c.g, x, e).solveMatrixFree(ctx, alpha, 1e-10, nil); err != nil {
						b.Fatal(err)
					}
				}
				v0, se := evalVI(b, c.p, f, c.g, ref)
				fmt.Printf("n %d %s: alpha %.4g, reference VI %.5g, SE %.3g\n", c.n, f.Name, alpha, v0, se)
				for _, tau := range []float64{1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 1e-4, 1e-6} {
					w, steps, _, _, err := doubleProblem(c.g, x, e).solveMatrixFree(ctx, alpha, tau, nil)
					if err != nil {
						b.Fatal(err)
					}
					v, _ := evalVI(b, c.p, f, c.g, w)
					fmt.Printf("  tau %g: %d steps, |w - w*| / |w*| %.3g, VI %.5g, moved %.3g SE\n", tau, steps, relDiff(w, ref), v, math.Abs(v-v0)/se)
				}
			}
		}
	}
}

// evalVI is the evaluation VI (squared error) of the network at theta +
// dtheta on feature f's dropped evaluation rows against the full model,
// and its standard error.
func evalVI(b *testing.B, p *framework.Problem, f framework.Feature, g framework.Gradienter, dtheta []float64) (float64, float64) {
	pred, err := g.PredictShifted(context.Background(), p.Drop(p.XEval, f), dtheta)
	if err != nil {
		b.Fatal(err)
	}
	full, y := p.FullEval.RawMatrix().Data, p.YEval
	d := make([]float64, len(y))
	for i, yv := range y {
		r, q := yv-pred.At(i, 0), yv-full[i]
		d[i] = r*r - q*q
	}
	mean := floats.Sum(d) / float64(len(d))
	ss := 0.0
	for _, v := range d {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(d)-1) / float64(len(d)))
}

// BenchmarkScaleSearchVariants is the study behind subsampleRows, the
// folds and the search's tolerance: per feature x1..x8, the penalty each
// (rows, folds, tolerance in decades) variant chooses, the search's time
// and its evaluations (candidate penalties, each one shifted prediction per
// fold), and how far the VI moves from the baseline's (1000 rows, 3 folds,
// 0.05), in units of its standard error.
func BenchmarkScaleSearchVariants(b *testing.B) {
	scaleGet(b)
	c := &scaleCase
	ctx := context.Background()
	for b.Loop() {
		for _, f := range c.p.Features()[:8] {
			x, e := c.residuals(b, f)
			var v0 float64
			for i, v := range []struct {
				rows, folds int
				tol         float64
			}{{1000, 3, 0.05}, {1000, 3, 0.15}, {1000, 3, 0.25}, {500, 3, 0.05}, {1000, 2, 0.05}} {
				start := time.Now()
				alpha, err := testProblem(Estimator{Folds: v.folds, cfg: config{subsampleRows: v.rows, subsampleTol: v.tol}}, c.g, x, c.t, e, c.seed).subsampleAlpha(ctx, nil)
				if err != nil {
					b.Fatal(err)
				}
				secs := time.Since(start).Seconds()
				w := make([]float64, c.g.NumParams()) // no update: the full model
				if !math.IsInf(alpha, 1) {
					if w, _, _, _, err = doubleProblem(c.g, x, e).solveMatrixFree(ctx, alpha, energyTol, nil); err != nil {
						b.Fatal(err)
					}
				}
				vi, se := evalVI(b, c.p, f, c.g, w)
				if i == 0 {
					v0 = vi
				}
				fmt.Printf("%s rows %d folds %d tol %.2f: search %.3fs, alpha %.3g, VI %.4g, moved %.3g SE\n", f.Name, v.rows, v.folds, v.tol, secs, alpha, vi, math.Abs(vi-v0)/se)
			}
		}
	}
}

func relDiff(a, b []float64) float64 {
	d := make([]float64, len(a))
	floats.SubTo(d, a, b)
	return floats.Norm(d, 2) / floats.Norm(b, 2)
}
