package mlp

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// passBound is the rounding analysis of an input's float32 pass (pass32)
// against its float64 one, entry by entry, to first order (Higham's
// gamma bounds compose by adding their counts: gamma(a) + gamma(b) +
// gamma(a) gamma(b) <= gamma(a + b)):
//
//   - forward: the input and the weights and biases are rounded (one
//     rounding each), each layer's dot of in terms rounds in times, the
//     bias's addition once, and the ReLU is 1-Lipschitz; so with Abar_0 =
//     |x| and Zbar_l = Abar_l |W_l|^T + |b_l|, |Z32_l - Z_l| <= gamma(cZ_l)
//     Zbar_l, cZ_l = cA_l + in_l + 3, and the next layer's activations
//     inherit it (Abar_l+1 = Zbar_l where the unit is active, cA_l+1 =
//     cZ_l); the output layer adds its bias in float64 (cOut = cA_L +
//     in_L + 2);
//   - backward: the head's slope at the float32 output, rounded (a
//     regression's is the constant sd; a binary model's p(1-p) moves by at
//     most 0.1 |dz|, its derivative being at most 1/(6 sqrt 3)), so Dbar_L
//     = |slope| (+ 0.1 Zbar_L, binary) with cD_L = cOut + 1; then each
//     layer below rounds its weights once and sums out terms: Dbar_l-1 =
//     Dbar_l |W_l| where the unit is active, cD_l-1 = cD_l + out_l + 1.
//
// The masks are the same in both passes where no pre-activation lies
// within its bound of zero; near counts those that do (there a unit's
// signal may differ by its whole size, and the bound does not hold).
// absJ is the Jacobian of the absolute signals (Abar_l, Dbar_l), and cJ
// the count of a Jacobian entry's roundings: |Phi32 - Phi| <= gamma(cJ)
// absJ, and a product of it with |V| bounds what the signals' roundings
// move a product by.
type passBound struct {
	acts, deltas []*mat.Dense
	cA, cD       []int
	out          []float64
	cOut         int
	absJ         *mat.Dense
	cJ           int
	near         int
}

// boundPass returns the passBound of the rows xg (a model of one output a
// row).
func boundPass(md *Model, xg blas64.General) passBound {
	a, _ := md.signals(xg)
	n, last := xg.Rows, len(md.layers)-1
	pb := passBound{acts: make([]*mat.Dense, len(md.layers)), deltas: make([]*mat.Dense, len(md.layers)),
		cA: make([]int, len(md.layers)), cD: make([]int, len(md.layers))}
	pb.acts[0], pb.cA[0] = absOf(dense(xg)), 1
	var zbar *mat.Dense
	for l, ly := range md.layers {
		w := dense(ly.weights(md.trained.Theta))
		b := ly.bias(md.trained.Theta)
		var z mat.Dense // the float64 pre-activations, again
		z.Mul(dense(a.acts[l]), w.T())
		zbar = new(mat.Dense)
		zbar.Mul(pb.acts[l], absOf(w).T())
		cZ := pb.cA[l] + ly.in + 3
		for i := 0; i < n; i++ {
			for o := 0; o < ly.out; o++ {
				z.Set(i, o, z.At(i, o)+b[o])
				zbar.Set(i, o, zbar.At(i, o)+math.Abs(b[o]))
				if l < last && math.Abs(z.At(i, o)) <= gamma(cZ, u32)*zbar.At(i, o) {
					pb.near++
				}
			}
		}
		if l == last {
			pb.out, pb.cOut = zbar.RawMatrix().Data, pb.cA[l]+ly.in+2
			break
		}
		next := mat.DenseCopyOf(zbar)
		next.Apply(func(i, o int, v float64) float64 {
			if a.acts[l+1].Data[i*a.acts[l+1].Stride+o] == 0 {
				return 0
			}
			return v
		}, next)
		pb.acts[l+1], pb.cA[l+1] = next, cZ
	}
	slopes := make([]float64, n)
	md.head.Link(append([]float64(nil), a.out[:n]...), slopes)
	dl := mat.NewDense(n, 1, nil)
	for i, s := range slopes {
		v := math.Abs(s)
		if md.head.Task == framework.Binary {
			v += 0.1 * pb.out[i]
		}
		dl.Set(i, 0, v)
	}
	pb.deltas[last], pb.cD[last] = dl, pb.cOut+1
	for l := last; l > 0; l-- {
		var prev mat.Dense
		prev.Mul(pb.deltas[l], absOf(dense(md.layers[l].weights(md.trained.Theta))))
		prev.Apply(func(i, j int, v float64) float64 {
			if a.acts[l].Data[i*a.acts[l].Stride+j] == 0 {
				return 0
			}
			return v
		}, &prev)
		pb.deltas[l-1], pb.cD[l-1] = &prev, pb.cD[l]+md.layers[l].out+1
	}
	abs := &activations{acts: make([]blas64.General, len(md.layers))}
	ad := make([]blas64.General, len(md.layers))
	for l := range md.layers {
		abs.acts[l] = pb.acts[l].RawMatrix()
		ad[l] = pb.deltas[l].RawMatrix()
		pb.cJ = max(pb.cJ, pb.cA[l]+pb.cD[l]+1)
	}
	jac := make([]float64, n*md.m)
	md.jacobianRows(abs, ad, 0, n, jac)
	pb.absJ = mat.NewDense(n, md.m, jac)
	return pb
}

// requireMasks fails the test where the bound does not hold: a
// pre-activation within its rounding bound of zero.
func (pb passBound) requireMasks(t *testing.T) {
	t.Helper()
	if pb.near > 0 {
		t.Fatalf("%d pre-activations lie within their float32 rounding bound of zero: the passes' masks may differ there, and the bound does not apply", pb.near)
	}
}
