package lazy

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// BenchmarkScalePrecond is the experiment behind the preconditioner (lazy
// preconditions by the baseline's own basis, at each feature's penalty,
// where the rules of precond.go allow: BenchmarkScalePrecondRun): CG
// on features' normal equations (Phi^T Phi + alpha I) w = Phi^T e at the
// baseline's penalty, from 0, plain and preconditioned by the Ritz pairs
// (theta > alpha) of the baseline's Lanczos basis of 12 steps,
// P^-1 = (1/alpha)(I - V V^T) + V Theta^-1 V^T. Per step it prints the
// true relative energy error ||w - w*||^2_E / (J(0) - J(w)) (against a
// 1e-10 solve) and, in parentheses, the bound ||r||^2 / alpha / (J(0) -
// J(w)), a guarantee since E >= alpha I. See docs/performance.md.
func BenchmarkScalePrecond(b *testing.B) {
	c := &scaleTrained
	c.get(b)
	ctx := context.Background()
	jm, _ := framework.As[framework.JacobianMultiplier](c.g)
	m := c.g.NumParams()
	for b.Loop() {
		xb, eb := c.residuals(b, framework.Feature{Name: "(baseline)"})
		alphaB, err := testProblem(Estimator{}, c.g, xb, c.t, eb, c.seed).subsampleAlpha(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, kb := range []int{12} {
			opb := &jacobianOp{ctx: ctx, jm: jm, x: xb, n: len(eb), m: m}
			rb, _ := opb.mul(eb, true)
			kr := newKrylov(opb, rb)
			for kr.steps() < kb {
				if err := kr.extend(); err != nil {
					b.Fatal(err)
				}
			}
			k := kr.steps()
			carry := ritzCarry(kr, m, defaultCarryMaxValues)
			if carry == nil {
				b.Fatal("no Ritz pairs")
			}
			theta := carry[1 : 1+k]
			v := mat.NewDense(k, m, carry[1+k:]) // k x m rows: Ritz vectors
			for _, fi := range []int{0, 1, 2, 3, 5, 6} {
				f := c.p.Features()[fi]
				x, e := c.residuals(b, f)
				alpha := alphaB
				op := &jacobianOp{ctx: ctx, jm: jm, x: x, n: len(e), m: m}
				rhs, _ := op.mul(e, true)
				ref, _, _, _, err := doubleProblem(c.g, x, e).solveMatrixFree(ctx, alpha, 1e-10, nil)
				if err != nil {
					b.Fatal(err)
				}
				apply := func(dst, src []float64) { // E = A + alpha I
					op.mulVec(dst, src)
					floats.AddScaled(dst, alpha, src)
				}
				relErr := func(w []float64) float64 {
					d := make([]float64, m)
					floats.SubTo(d, w, ref)
					ed := make([]float64, m)
					apply(ed, d)
					ew := make([]float64, m)
					apply(ew, w)
					dec := 2*floats.Dot(rhs, w) - floats.Dot(w, ew)
					return floats.Dot(d, ed) / dec
				}
				for _, pre := range []bool{false, true} {
					minv := func(dst, src []float64) {
						if !pre {
							copy(dst, src)
							return
						}
						// (1/alpha)(I - V V^T) src + V Theta^-1 V^T src, only theta > alpha
						for i := range dst {
							dst[i] = src[i] / alpha
						}
						for j := 0; j < k; j++ {
							if theta[j] <= alpha {
								continue
							}
							vj := v.RawRowView(j)
							c := floats.Dot(vj, src)
							floats.AddScaled(dst, c*(1/theta[j]-1/alpha), vj)
						}
					}
					line := fmt.Sprintf("kb %d %s pre %v:", k, f.Name, pre)
					line += pcgTrace(rhs, alpha, apply, minv, relErr)
					fmt.Println(line)
				}
			}
			if kb == 6 {
				fmt.Printf("theta/alpha: %v\n", func() []float64 {
					o := make([]float64, k)
					for i := range o {
						o[i] = theta[i] / alphaB
					}
					return o
				}())
			}
		}
	}
}

// pcgTrace runs 8 steps of preconditioned CG (minv the preconditioner)
// on apply(w) = rhs from 0, alpha the shift, and returns per step the
// relative energy error relErr(w) and, in parentheses, the bound ||r||^2
// / alpha / (J(0) - J(w)); it stops below 1e-3.
func pcgTrace(rhs []float64, alpha float64, apply, minv func(dst, src []float64), relErr func([]float64) float64) string {
	m := len(rhs)
	w := make([]float64, m)
	r := append([]float64(nil), rhs...)
	z := make([]float64, m)
	minv(z, r)
	p := append([]float64(nil), z...)
	rz := floats.Dot(r, z)
	ap := make([]float64, m)
	line := ""
	for it := 1; it <= 8; it++ {
		apply(ap, p)
		a := rz / floats.Dot(p, ap)
		floats.AddScaled(w, a, p)
		floats.AddScaled(r, -a, ap)
		minv(z, r)
		rz2 := floats.Dot(r, z)
		floats.AddScaledTo(p, z, rz2/rz, p)
		rz = rz2
		re := relErr(w)
		ew := make([]float64, m)
		apply(ew, w)
		dec := 2*floats.Dot(rhs, w) - floats.Dot(w, ew)
		line += fmt.Sprintf(" %d:%.2g(r %.2g)", it, re, floats.Dot(r, r)/alpha/dec)
		if re < 1e-3 {
			break
		}
	}
	return line
}

// BenchmarkScalePrecondRun is lazy with and without the baseline's Ritz
// pairs as a preconditioner (config.precondWhen, precond.go), as vi bench
// runs it (lazyPair): per feature the Krylov steps, seconds, and how far
// its VI moved in units of its standard error; on highdim n 10000
// (x1..x16) and linear n 20000 (all 6 features), (200, 100), the MLP's
// default training:
//
//	go test -run X -bench ScalePrecondRun -benchtime 1x ./estimators/lazy
func BenchmarkScalePrecondRun(b *testing.B) {
	lazyPair(b, [2]string{"plain", "preconditioner allowed"}, [2]func() Estimator{
		func() Estimator { return Estimator{cfg: config{precondWhen: math.Inf(1)}} },
		func() Estimator { return Estimator{} },
	})
}

// BenchmarkScaleSketchRun is lazy with and without the subsample's sketch
// as the final solves' preconditioner (config.noSketch, sketch.go), as
// BenchmarkScalePrecondRun (without it the baseline's Ritz pairs
// precondition where they serve):
//
//	go test -run X -bench ScaleSketchRun -benchtime 1x ./estimators/lazy
func BenchmarkScaleSketchRun(b *testing.B) {
	lazyPair(b, [2]string{"ritz", "sketch"}, [2]func() Estimator{
		func() Estimator { return Estimator{cfg: config{noSketch: true}} },
		func() Estimator { return Estimator{} },
	})
}

// BenchmarkScaleSketchExact is lazy with its final solves to 1e-8
// (unpreconditioned) against lazy's own (the subsample's sketch
// preconditioning them), as BenchmarkScalePrecondRun: how far the VIs of
// lazy's solves are from those of exact ones.
//
//	go test -run X -bench ScaleSketchExact -benchtime 1x ./estimators/lazy
func BenchmarkScaleSketchExact(b *testing.B) {
	lazyPair(b, [2]string{"exact", "sketch"}, [2]func() Estimator{
		func() Estimator {
			return Estimator{cfg: config{noSketch: true, precondWhen: math.Inf(1), solveTol: 1e-8}}
		},
		func() Estimator { return Estimator{} },
	})
}

// BenchmarkScalePrecisionRun is lazy with the matrix-free solves' products
// in double and in single precision (Estimator.DoublePrecision), as
// BenchmarkScalePrecondRun:
//
//	go test -run X -bench ScalePrecisionRun -benchtime 1x ./estimators/lazy
func BenchmarkScalePrecisionRun(b *testing.B) {
	lazyPair(b, [2]string{"double", "single"}, [2]func() Estimator{
		func() Estimator { return Estimator{DoublePrecision: true} },
		func() Estimator { return Estimator{} },
	})
}

// lazyPair runs lazy twice, configured by configs[0] and configs[1], as vi
// bench runs it (pipeline.Estimate, plain inference, one worker, the
// baseline with the features), on highdim n 10000 (x1..x16) and linear n
// 20000 (all 6 features), (200, 100), and prints per feature the Krylov
// steps, seconds, VI and how far the second run's VI moved from the
// first's in units of its standard error.
func lazyPair(b *testing.B, labels [2]string, configs [2]func() Estimator) {
	ctx := context.Background()
	for _, c := range []*scaleProblem{&scaleTrained, &scaleLinearBench} {
		b.Run(fmt.Sprintf("%s-%d", c.setting, c.n), func(b *testing.B) {
			c.get(b)
			feats := c.p.Features()
			if len(feats) > 16 {
				feats = feats[:16]
			}
			for b.Loop() {
				var res [2][]inference.Result
				var secs [2]float64
				for i, config := range configs {
					start := time.Now()
					var err error
					if res[i], err = pipeline.Estimate(ctx, c.p, measures.MSE(), []framework.Estimator{config()}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain}, Workers: 1}); err != nil {
						b.Fatal(err)
					}
					secs[i] = time.Since(start).Seconds()
				}
				var steps [2]float64
				worst := 0.0
				for j, r := range res[0] {
					o := res[1][j]
					var s [2]float64
					for i, rr := range []inference.Result{r, o} {
						if v, ok := rr.Get("krylov_steps"); ok {
							s[i] = v.(float64)
						}
						steps[i] += s[i]
					}
					moved := math.Abs(o.VI-r.VI) / r.SE
					worst = math.Max(worst, moved)
					fmt.Printf("%s n %d %s: %s %g steps, %.2f s, VI %.5g (SE %.3g); %s: %g steps, %.2f s, VI %.5g: %.2g SE\n",
						c.setting, c.n, r.Feature, labels[0], s[0], r.Seconds, r.VI, r.SE, labels[1], s[1], o.Seconds, o.VI, moved)
				}
				fmt.Printf("%s n %d, %d features and the baseline: %s %g steps, %.2f s; %s %g steps, %.2f s; VIs moved at most %.2g SE\n",
					c.setting, c.n, len(feats), labels[0], steps[0], secs[0], labels[1], steps[1], secs[1], worst)
			}
		})
	}
}
