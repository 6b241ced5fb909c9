package mlp

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

var _ framework.JacobianMultiplier = (*Model)(nil)

// The Jacobian's row i, for layer l, is the outer product of the signal
// Delta_l[i] at the layer's output and its input A_l[i] (and Delta_l[i] for
// the bias), so both products go through the signals at the fitted
// parameters (memoised, O(n x width) values) without forming the Jacobian:
//
//	(Phi v)_i = sum_l Delta_l[i] . (W_v,l A_l[i] + b_v,l)
//	Phi^T u   = per layer, dW = Delta_l^T diag(u) A_l and db = Delta_l^T u
//
// 2 n M flops per vector each, a forward pass's worth. A multiclass
// model's products are a forward and a backward pass instead
// (softmaxjvp.go).

// JacobianMul returns Phi(x) V for V of M x p (framework.JacobianMultiplier).
func (md *Model) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	acts, deltas, n, err := md.productArgs(ctx, "JacobianMul", x, v, md.m)
	if err != nil {
		return nil, err
	}
	_, p := v.Dims()
	out := mat.NewDense(n, p, nil)
	col := make([]float64, md.m)
	var t []float64
	var ps *params
	if acts.prob != nil {
		ps = newParams(md.layers, md.trained.Theta)
		t = make([]float64, n)
	}
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianMul: %w", err)
		}
		mat.Col(col, c, v)
		if acts.prob != nil {
			md.softmaxJVP(ps, acts, col, t)
			out.SetCol(c, t)
			continue
		}
		for l, ly := range md.layers {
			if cap(t) < n*ly.out {
				t = make([]float64, n*ly.out)
			}
			// T = A_l W^T + 1 b^T (n x out), then row i's dot with Delta_l[i].
			tg := blas64.General{Rows: n, Cols: ly.out, Stride: ly.out, Data: t[:n*ly.out]}
			b := ly.bias(col)
			for i := 0; i < n; i++ {
				copy(tg.Data[i*ly.out:(i+1)*ly.out], b)
			}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, rowsOf(acts.acts[l], n), ly.weights(col), 1, tg)
			d := deltas[l]
			for i := 0; i < n; i++ {
				s := 0.0
				for o, dv := range d.Data[i*d.Stride : i*d.Stride+ly.out] {
					s += dv * tg.Data[i*ly.out+o]
				}
				out.Set(i, c, out.At(i, c)+s)
			}
		}
	}
	return out, nil
}

// JacobianTMul returns Phi(x)^T U for U of (n K) x p
// (framework.JacobianMultiplier).
func (md *Model) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	acts, deltas, n, err := md.productArgs(ctx, "JacobianTMul", x, u, -1)
	if err != nil {
		return nil, err
	}
	_, p := u.Dims()
	out := mat.NewDense(md.m, p, nil)
	a := make([]float64, n)
	g := make([]float64, md.m)
	var scratch []float64
	var ps *params
	if acts.prob != nil {
		ps = newParams(md.layers, md.trained.Theta)
	}
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianTMul: %w", err)
		}
		mat.Col(a, c, u)
		clear(g)
		if acts.prob != nil {
			md.softmaxVJP(ps, acts, a, g)
		} else {
			scratch = md.jacobianTVec(acts, deltas, a, g, scratch)
		}
		out.SetCol(c, g)
	}
	return out, nil
}

// productArgs checks a product's arguments (rows of v: want, or the
// Jacobian's rows when want < 0) and returns the signals of x and the
// Jacobian's rows.
func (md *Model) productArgs(ctx context.Context, op string, x mat.Matrix, v *mat.Dense, want int) (*activations, []blas64.General, int, error) {
	if err := md.ready(ctx); err != nil {
		return nil, nil, 0, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, nil, 0, err
	}
	n := xg.Rows * md.head.RowsPerSample()
	if want < 0 {
		want = n
	}
	if r, c := v.Dims(); r != want || c < 1 {
		return nil, nil, 0, fmt.Errorf("mlp: %s: %d x %d vectors, want %d rows", op, r, c, want)
	}
	acts, deltas := md.signalsOf(xg)
	return acts, deltas, n, nil
}

// jacobianTVec writes Phi^T a into out (len M, zero on entry) from the signals, using
// scratch (returned, grown as needed) for Delta's scaled rows.
func (md *Model) jacobianTVec(acts *activations, deltas []blas64.General, a, out, scratch []float64) []float64 {
	if acts.prob != nil {
		md.softmaxVJP(newParams(md.layers, md.trained.Theta), acts, a, out)
		return scratch
	}
	n := len(a)
	for l, ly := range md.layers {
		// Delta's rows scaled by a (the signals are shared: copy).
		src := deltas[l]
		if need := n * src.Cols; cap(scratch) < need {
			scratch = make([]float64, need)
		}
		d := blas64.General{Rows: n, Cols: src.Cols, Stride: src.Cols, Data: scratch[:n*src.Cols]}
		for i := 0; i < n; i++ {
			row := d.Data[i*d.Stride : i*d.Stride+d.Cols]
			for j, v := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
				row[j] = v * a[i]
			}
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, d, rowsOf(acts.acts[l], n), 0, ly.weights(out))
		nn.ColSums(ly.bias(out), d)
	}
	return scratch
}
