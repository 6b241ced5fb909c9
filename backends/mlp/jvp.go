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
// 2 n M flops per vector each, a forward pass's worth. For multiclass
// (K rows per sample, which share the sample's A_l) the products with the
// activations run once per sample: T_l = A_l W_v,l^T + b_v,l per sample
// and dW = D_l^T A_l with D_l[s] = sum_k u_{sK+k} Delta_l[sK+k], 2 n M
// flops per vector for n samples where the stacked rows would cost 2 n K M
// (the signals' own products, n K times the widths, are small beside
// them).

// JacobianMul returns Phi(x) V for V of M x p (framework.JacobianMultiplier).
func (md *Model) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	acts, deltas, n, err := md.productArgs(ctx, "JacobianMul", x, v, md.m)
	if err != nil {
		return nil, err
	}
	_, p := v.Dims()
	rep := acts.rowsPer()
	ns := n / rep // rows of the activations
	out := mat.NewDense(n, p, nil)
	raw := out.RawMatrix()
	col := make([]float64, md.m)
	var t []float64
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianMul: %w", err)
		}
		mat.Col(col, c, v)
		for l, ly := range md.layers {
			if cap(t) < ns*ly.out {
				t = make([]float64, ns*ly.out)
			}
			// T = A_l W^T + 1 b^T (ns x out), then row i's dot with
			// Delta_l[i] and T's row i / rep.
			tg := blas64.General{Rows: ns, Cols: ly.out, Stride: ly.out, Data: t[:ns*ly.out]}
			b := ly.bias(col)
			for i := 0; i < ns; i++ {
				copy(tg.Data[i*ly.out:(i+1)*ly.out], b)
			}
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, rowsOf(acts.acts[l], ns), ly.weights(col), 1, tg)
			d := deltas[l]
			for i := 0; i < n; i++ {
				tr := tg.Data[i/rep*ly.out : (i/rep+1)*ly.out]
				s := 0.0
				for o, dv := range d.Data[i*d.Stride : i*d.Stride+ly.out] {
					s += dv * tr[o]
				}
				raw.Data[i*raw.Stride+c] += s
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
	for c := 0; c < p; c++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mlp: JacobianTMul: %w", err)
		}
		mat.Col(a, c, u)
		clear(g)
		scratch = md.jacobianTVec(acts, deltas, a, g, scratch)
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

// jacobianTVec writes Phi^T a into out (len M, zero on entry) from the
// signals, using scratch (returned, grown as needed) for Delta's rows
// scaled by a and summed over each row of the activations' rows (with
// acts.rep > 1, D[s] = sum_k a[s rep + k] Delta[s rep + k]).
func (md *Model) jacobianTVec(acts *activations, deltas []blas64.General, a, out, scratch []float64) []float64 {
	rep := acts.rowsPer()
	ns := len(a) / rep
	for l, ly := range md.layers {
		// Delta's rows scaled by a (the signals are shared: copy).
		src := deltas[l]
		if need := ns * src.Cols; cap(scratch) < need {
			scratch = make([]float64, need)
		}
		d := blas64.General{Rows: ns, Cols: src.Cols, Stride: src.Cols, Data: scratch[:ns*src.Cols]}
		for s := 0; s < ns; s++ {
			row := d.Data[s*d.Stride : s*d.Stride+d.Cols]
			i := s * rep
			for j, v := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
				row[j] = v * a[i]
			}
			for i++; i < (s+1)*rep; i++ {
				for j, v := range src.Data[i*src.Stride : i*src.Stride+src.Cols] {
					row[j] += v * a[i]
				}
			}
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, d, rowsOf(acts.acts[l], ns), 0, ly.weights(out))
		nn.ColSums(ly.bias(out), d)
	}
	return scratch
}
