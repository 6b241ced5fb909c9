package mlp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// TestGram checks the model's Gram, formed a chunk of the Jacobian's rows
// at a time, against framework.JacobianGram's from the whole Jacobian, to
// the bit: each entry is the same sum over the rows in the same order
// (rows past several chunks, not a multiple of one; a multiclass model's K
// rows a sample).
func TestGram(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		t.Run(task.String(), func(t *testing.T) {
			md, x := smallProblem(t, task, "40,20", 2*gramChunkRows+77)
			n, _ := x.Dims()
			rows := n
			if task == framework.Multiclass {
				rows *= md.head.RowsPerSample()
			}
			rng := rand.New(rand.NewPCG(3, 5))
			e := make([]float64, rows)
			for i := range e {
				e[i] = rng.NormFloat64()
			}
			if _, ok := framework.AsGrammer(md); !ok {
				t.Fatal("the model is not a Grammer")
			}
			g, b, err := md.Gram(ctx, x, e)
			if err != nil {
				t.Fatal(err)
			}
			wantG, wantB, err := framework.JacobianGram(ctx, md, x, e)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(g, wantG) {
				t.Errorf("G differs from the Jacobian's Phi^T Phi (max |diff| %g)", maxDiff(g, wantG))
			}
			if !mat.Equal(mat.NewVecDense(len(b), b), mat.NewVecDense(len(wantB), wantB)) {
				t.Error("b differs from the Jacobian's Phi^T e")
			}
			if _, _, err := md.Gram(ctx, x, e[1:]); err == nil {
				t.Error("Gram accepted a residual vector of the wrong length")
			}
		})
	}
}

func maxDiff(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}
