package mlp

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// TestJacobianProducts compares the matrix-free products with the
// materialised Jacobian's, for every task (multiclass: K rows per sample)
// and several depths; the same sums in another order, so 1e-10 relative.
func TestJacobianProducts(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		for _, hidden := range []string{"8", "6,5,3"} {
			t.Run(task.String()+"/"+hidden, func(t *testing.T) {
				md, x := smallProblem(t, task, hidden, 120)
				j, err := md.Jacobian(ctx, x)
				if err != nil {
					t.Fatal(err)
				}
				rows, m := j.Dims()
				rng := rand.New(rand.NewPCG(5, 7))
				v := mat.NewDense(m, 3, nil)
				u := mat.NewDense(rows, 3, nil)
				for _, d := range []*mat.Dense{v, u} {
					raw := d.RawMatrix().Data
					for i := range raw {
						raw[i] = rng.NormFloat64()
					}
				}
				xBefore := mat.DenseCopyOf(x)
				var want mat.Dense
				want.Mul(j, v)
				got, err := md.JacobianMul(ctx, x, v)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(got.RawMatrix().Data, want.RawMatrix().Data); e > 1e-10 {
					t.Errorf("JacobianMul: relative error %g", e)
				}
				want.Reset()
				want.Mul(j.T(), u)
				got, err = md.JacobianTMul(ctx, x, u)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(got.RawMatrix().Data, want.RawMatrix().Data); e > 1e-10 {
					t.Errorf("JacobianTMul: relative error %g", e)
				}
				if !mat.Equal(x, xBefore) {
					t.Errorf("a product modified its input")
				}
				if _, err := md.JacobianMul(ctx, x, mat.NewDense(m+1, 1, nil)); err == nil {
					t.Errorf("JacobianMul accepted %d rows for %d parameters", m+1, m)
				}
			})
		}
	}
}
