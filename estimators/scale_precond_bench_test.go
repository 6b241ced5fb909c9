package estimators

import (
	"context"
	"fmt"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// BenchmarkScalePrecond is an experiment, not used by lazy: CG on
// features' normal equations (Phi^T Phi + alpha I) w = Phi^T e at the
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
	jm, _ := framework.AsJacobianMultiplier(c.g)
	m := c.g.NumParams()
	for b.Loop() {
		xb, eb := c.residuals(b, framework.Feature{Name: "(baseline)"})
		alphaB, err := (Lazy{}).subsampleAlpha(ctx, c.g, xb, c.t, eb, 1, c.seed, map[string]float64{}, 0)
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
			tt := mat.NewSymDense(k, nil)
			for i := 0; i < k; i++ {
				tt.SetSym(i, i, kr.diag[i])
				if i+1 < k {
					tt.SetSym(i, i+1, kr.off[i])
				}
			}
			var es mat.EigenSym
			es.Factorize(tt, true)
			var s mat.Dense
			es.VectorsTo(&s)
			theta := es.Values(nil)
			var v mat.Dense // k x m rows: Ritz vectors
			v.Mul(s.T(), mat.NewDense(k, m, kr.q[:k*m]))
			for _, fi := range []int{0, 1, 2, 3, 5, 6} {
				f := c.p.Features()[fi]
				x, e := c.residuals(b, f)
				alpha := alphaB
				op := &jacobianOp{ctx: ctx, jm: jm, x: x, n: len(e), m: m}
				rhs, _ := op.mul(e, true)
				ref, _, _, err := matrixFreeSolve(ctx, c.g, x, e, alpha, 1e-10, DefaultMemory)
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
					w := make([]float64, m)
					r := append([]float64(nil), rhs...)
					z := make([]float64, m)
					minv(z, r)
					p := append([]float64(nil), z...)
					rz := floats.Dot(r, z)
					ap := make([]float64, m)
					line := fmt.Sprintf("kb %d %s pre %v:", k, f.Name, pre)
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
