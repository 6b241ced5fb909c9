package mlp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

// TestGram checks the model's Gram, formed a chunk of the Jacobian's rows
// at a time, against jacobian.GramFromJacobian's from the whole Jacobian (rows
// past several chunks, not a multiple of one; a multiclass model's K rows a
// sample): to the bit where the products sum in one fixed order
// (exactProducts: each entry is the same sum over the rows in the same
// order), else within the error bound of the two computations.
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
			if _, ok := framework.As[framework.GramBuilder](md); !ok {
				t.Fatal("the model is not a GramBuilder")
			}
			g, b, err := md.Gram(ctx, x, e, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkGramInto(t, md, x, e, g, b)
			wantG, wantB, err := jacobian.GramFromJacobian(ctx, md, x, e)
			if err != nil {
				t.Fatal(err)
			}
			if exactProducts {
				if !mat.Equal(g, wantG) {
					t.Errorf("G differs from the Jacobian's Phi^T Phi (max |diff| %g)", maxDiff(g, wantG))
				}
				if !mat.Equal(mat.NewVecDense(len(b), b), mat.NewVecDense(len(wantB), wantB)) {
					t.Error("b differs from the Jacobian's Phi^T e")
				}
			} else {
				checkGramBound(t, md, x, e, g, wantG, b, wantB)
			}
			if _, _, err := md.Gram(ctx, x, e[1:], nil); err == nil {
				t.Error("Gram accepted a residual vector of the wrong length")
			}
		})
	}
}

// checkGramInto checks Gram with a destination: in dst's memory where it
// holds M x M values, whatever they were (NaNs here), else in fresh
// memory, and the same G and b to the bit as in fresh memory (g, b).
func checkGramInto(t *testing.T, md *Model, x mat.Matrix, e []float64, g *mat.SymDense, b []float64) {
	t.Helper()
	m := md.NumParams()
	for _, size := range []int{m * m, m*m - 1} {
		dst := make([]float64, size, size+3)
		for i := range dst[:cap(dst)] {
			dst[:cap(dst)][i] = math.NaN()
		}
		g2, b2, err := md.Gram(ctx, x, e, dst)
		if err != nil {
			t.Fatal(err)
		}
		inDst := &g2.RawSymmetric().Data[0] == &dst[0]
		if fits := cap(dst) >= m*m; inDst != fits {
			t.Errorf("dst of capacity %d for %d x %d: G in its memory %v, want %v", cap(dst), m, m, inDst, fits)
		}
		if !mat.Equal(g2, g) || !mat.Equal(mat.NewVecDense(m, b2), mat.NewVecDense(m, b)) {
			t.Errorf("dst of capacity %d: G or b differs from the Gram in fresh memory", cap(dst))
		}
	}
}

// checkGramBound checks two computations of Phi^T Phi and Phi^T e against
// the bound of their rounding: each entry is a sum over the r rows of
// products of Jacobian entries, themselves sums of at most k terms (k the
// widest layer plus one), so either computation lies within
// gamma(r + 2k) (|Phi|^T |Phi|)_ij of the exact value (Higham, Accuracy and
// Stability, 3.1 and 3.5, with the Jacobian's own errors bounded relative
// to |Phi|), and the two within twice that.
func checkGramBound(t *testing.T, md *Model, x mat.Matrix, e []float64, g, wantG mat.Symmetric, b, wantB []float64) {
	t.Helper()
	j, err := md.Jacobian(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	r, m := j.Dims()
	k := 1
	for _, l := range md.layers {
		k = max(k, l.in+1, l.out+1)
	}
	const u = 0x1p-53
	gamma := float64(r+2*k) * u / (1 - float64(r+2*k)*u)
	abs := mat.DenseCopyOf(j)
	abs.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, abs)
	var bound mat.Dense
	bound.Mul(abs.T(), abs)
	for p := 0; p < m; p++ {
		for q := 0; q <= p; q++ {
			if d := math.Abs(g.At(p, q) - wantG.At(p, q)); d > 2*gamma*bound.At(p, q) {
				t.Fatalf("G[%d,%d] %g differs from the Jacobian's Phi^T Phi %g by %g, beyond the bound %g", p, q, g.At(p, q), wantG.At(p, q), d, 2*gamma*bound.At(p, q))
			}
		}
	}
	absE := make([]float64, r)
	for i, v := range e {
		absE[i] = math.Abs(v)
	}
	var boundB mat.VecDense
	boundB.MulVec(abs.T(), mat.NewVecDense(r, absE))
	for p := range m {
		if d := math.Abs(b[p] - wantB[p]); d > 2*gamma*boundB.AtVec(p) {
			t.Fatalf("b[%d] %g differs from the Jacobian's Phi^T e %g by %g, beyond the bound %g", p, b[p], wantB[p], d, 2*gamma*boundB.AtVec(p))
		}
	}
}

func maxDiff(a, b mat.Matrix) float64 {
	var d mat.Dense
	d.Sub(a, b)
	return mat.Norm(&d, math.Inf(1))
}
