package mlp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// TestSingleKernel compares the single-precision kernel and transposed
// product (SingleKernel) with the double ones, entry by entry, against a
// bound from the arithmetic. A Gram of layer l's signals, G = S1 S2^T over
// k terms (k = the layer's in for the activations, out for the deltas),
// is a float32 product of the float32 pass's signals, each off by at most
// gamma32(c) Sbar from the float64 one (boundPass: Sbar the absolute
// signals, c the roundings' count): it is off by at most gamma32(k + 2 +
// 2c) (Sbar1 Sbar2^T) from the exact one (gamma(k) = k u / (1 - k u), u =
// 2^-24), and the double one by gamma64(k) of |S1| |S2|^T; K's entry
// sum_l GD_l (GA_l + 1) is then off by at most sum_l eD_l (|GA_l| + 1 +
// eA_l) + |GD_l| eA_l, with gamma64(2L + 2) of its terms for the float64
// sums. Phi^T a in float32 (Delta's rows times a, three roundings, then
// sums over the n rows) is off by at most gamma32(n + 4 + cJ) (absJ^T
// |a|). The differences must be within those bounds and not all zero, and
// some of them beyond what two float64 computations could differ by (the
// same bounds with gamma64 for gamma32, doubled): a float64 route to the
// same values passes the other checks. A multiclass model's stay in
// float64, bit for bit.
func TestSingleKernel(t *testing.T) {
	for _, task := range append(tasks, framework.Multiclass) {
		for _, hidden := range []string{"8", "6,5,3", "40,20"} {
			t.Run(task.String()+"/"+hidden, func(t *testing.T) {
				md, x := smallProblem(t, task, hidden, 120)
				sk, ok := framework.As[framework.SingleKerneler](md)
				if !ok {
					t.Fatal("the model is not a SingleKerneler")
				}
				s := sk.SingleKernel()
				_, p := x.Dims()
				x1, x2 := x.Slice(0, 70, 0, p).(*mat.Dense), x.Slice(70, 120, 0, p).(*mat.Dense)
				for _, pair := range [][2]*mat.Dense{{x1, x2}, {x1, nil}} {
					var arg2 mat.Matrix
					if pair[1] != nil {
						arg2 = pair[1]
					}
					want, err := md.Kernel(ctx, pair[0], arg2)
					if err != nil {
						t.Fatal(err)
					}
					got, err := s.Kernel(ctx, pair[0], arg2)
					if err != nil {
						t.Fatal(err)
					}
					if arg2 == nil && !mat.Equal(got, got.T()) {
						t.Error("Kernel(x1, nil) is not exactly symmetric")
					}
					if task == framework.Multiclass {
						if !mat.Equal(got, want) {
							t.Error("a multiclass model's single-precision kernel is not its double one")
						}
						continue
					}
					x2 := pair[1]
					if x2 == nil {
						x2 = pair[0]
					}
					bound := kernelBound(t, md, pair[0], x2, func(k int) float64 { return gamma(k+2, u32) + gamma(k, u64) }, gamma(2*len(md.layers)+2, u64), true)
					checkBound(t, "Kernel", got, want, bound)
					double := kernelBound(t, md, pair[0], x2, func(k int) float64 { return 2 * gamma(k+2, u64) }, 2*gamma(2*len(md.layers)+2, u64), false)
					checkBeyondDouble(t, "Kernel", got, want, double)
				}
				rng := rand.New(rand.NewPCG(3, 5))
				rows, _ := x.Dims()
				rows *= md.head.RowsPerSample()
				a := make([]float64, rows)
				for i := range a {
					a[i] = rng.NormFloat64()
				}
				want, err := md.JacobianTVec(ctx, x, a)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.JacobianTVec(ctx, x, a)
				if err != nil {
					t.Fatal(err)
				}
				if task == framework.Multiclass {
					if !floats.Equal(got, want) {
						t.Error("a multiclass model's single-precision JacobianTVec is not its double one")
					}
					return
				}
				j, err := md.Jacobian(ctx, x)
				if err != nil {
					t.Fatal(err)
				}
				pb := boundPass(md, x.RawMatrix())
				pb.requireMasks(t)
				var bound, double mat.Dense
				double.Mul(absOf(j).T(), absOf(mat.NewDense(len(a), 1, a)))
				double.Scale(2*gamma(rows+4, u64), &double)
				bound.Mul(pb.absJ.T(), absOf(mat.NewDense(len(a), 1, a)))
				bound.Scale(gamma(rows+4+pb.cJ, u32)+gamma(rows, u64), &bound)
				gotV, wantV := mat.NewDense(len(got), 1, got), mat.NewDense(len(want), 1, want)
				checkBound(t, "JacobianTVec", gotV, wantV, &bound)
				checkBeyondDouble(t, "JacobianTVec", gotV, wantV, &double)
			})
		}
	}
}

// kernelBound is TestSingleKernel's bound on the difference of the
// single- and double-precision kernels of x1 and x2, from the signals:
// per layer, the Grams' bounds e = g(k) |S1| |S2|^T (k the Gram's terms),
// then their products' and sums' (sum: the float64 sums' gamma). With
// pass, the signals are the float32 pass's: |S| is boundPass's absolute
// signals and k adds the roundings of both factors (2 c, c their count).
func kernelBound(t *testing.T, md *Model, x1, x2 *mat.Dense, g func(k int) float64, sum float64, pass bool) *mat.Dense {
	cA, cD := make([]int, len(md.layers)), make([]int, len(md.layers))
	signals := func(x *mat.Dense) ([]*mat.Dense, []*mat.Dense) {
		xg, _ := md.input(x)
		if pass {
			pb := boundPass(md, xg)
			pb.requireMasks(t)
			cA, cD = pb.cA, pb.cD
			return pb.acts, pb.deltas
		}
		e := md.entryOf(xg)
		var acts, deltas []*mat.Dense
		for l := range md.layers {
			acts = append(acts, dense(e.acts.acts[l]))
			deltas = append(deltas, dense(e.deltas[l]))
		}
		return acts, deltas
	}
	a1, d1 := signals(x1)
	a2, d2 := signals(x2)
	n1, _ := x1.Dims()
	n2, _ := x2.Dims()
	bound, terms := mat.NewDense(n1, n2, nil), mat.NewDense(n1, n2, nil)
	for l, ly := range md.layers {
		gram := func(s1, s2 *mat.Dense) (gm, abs *mat.Dense) {
			gm, abs = new(mat.Dense), new(mat.Dense)
			gm.Mul(s1, s2.T())
			abs.Mul(absOf(s1), absOf(s2).T())
			return gm, abs
		}
		ga, sa := gram(a1[l], a2[l])
		gd, sd := gram(d1[l], d2[l])
		ea, ed := g(ly.in+2*cA[l]), g(ly.out+2*cD[l])
		for i := 0; i < n1; i++ {
			for j := 0; j < n2; j++ {
				eA, eD := ea*sa.At(i, j), ed*sd.At(i, j)
				gA, gD := math.Abs(ga.At(i, j))+1, math.Abs(gd.At(i, j))
				bound.Set(i, j, bound.At(i, j)+eD*(gA+eA)+gD*eA)
				terms.Set(i, j, terms.At(i, j)+(gD+eD)*(gA+eA))
			}
		}
	}
	terms.Scale(sum, terms)
	bound.Add(bound, terms)
	return bound
}

// dense is a copy of g.
// u32 and u64 are float32's and float64's unit roundoffs.
const u32, u64 = 0x1p-24, 0x1p-53

// gamma is the rounding bound of k operations at unit roundoff u:
// k u / (1 - k u) (Higham, Accuracy and Stability of Numerical
// Algorithms, 3.1).
func gamma(k int, u float64) float64 { return float64(k) * u / (1 - float64(k)*u) }

// absOf is the matrix of a's absolute values.
func absOf(a mat.Matrix) *mat.Dense {
	var d mat.Dense
	d.Apply(func(_, _ int, v float64) float64 { return math.Abs(v) }, a)
	return &d
}

func dense(g blas64.General) *mat.Dense {
	var d mat.Dense
	d.SetRawMatrix(g)
	return mat.DenseCopyOf(&d)
}

// checkBound: the single-precision got and the double want differ by at
// most bound, entry by entry, and not by zero everywhere.
func checkBound(t *testing.T, what string, got, want, bound *mat.Dense) {
	t.Helper()
	r, c := want.Dims()
	worst, nonzero := 0.0, false
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d := math.Abs(got.At(i, j) - want.At(i, j))
			nonzero = nonzero || d > 0
			if b := bound.At(i, j); d > b {
				t.Errorf("%s[%d, %d]: single %v, double %v: difference %g above the bound %g", what, i, j, got.At(i, j), want.At(i, j), d, b)
			} else if b > 0 {
				worst = max(worst, d/b)
			}
		}
	}
	if !nonzero {
		t.Errorf("%s: single precision equals double", what)
	}
	t.Logf("%s: largest difference %.3g of its bound", what, worst)
}

// checkBeyondDouble: some entry of the single-precision got differs from
// the double want by more than double, a bound on the difference of two
// float64 computations of the same values (each off by at most half of
// it), so that got was not computed in float64 by another route (whose
// other summation order would also differ from want, though by far less).
func checkBeyondDouble(t *testing.T, what string, got, want, double *mat.Dense) {
	t.Helper()
	r, c := want.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if math.Abs(got.At(i, j)-want.At(i, j)) > double.At(i, j) {
				return
			}
		}
	}
	t.Errorf("%s: every difference from the double precision is within float64's rounding: not computed in single precision", what)
}
