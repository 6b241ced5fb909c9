package mlp

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
)

// The products with a multiclass model's Jacobian, per sample i: Phi_i,
// the K x M Jacobian of the class probabilities, is S_i J_i with J_i the
// Jacobian of the logits and S_i = diag(p_i) - p_i p_i^T the softmax's
// (symmetric), so
//
//	Phi_i v   = S_i (J_i v)     (J v: a forward pass of the tangent v)
//	Phi^T u   = sum_i J_i^T (S_i u_i)   (a backward pass of the signals S_i u_i)
//
// on the memoised activations of the n samples, about 2 n M flops each
// plus the hidden layers' products with the weights (2 n M' for the M'
// parameters above the first layer). The stored signals (K rows per
// sample, n K times the widths) are not read: streaming them from memory
// costs as much as the products themselves.

// softmaxJVP writes Phi v for the parameter vector v into dst (n K,
// row i*K + k for class k of sample i) from the forward pass acts of the n
// samples (with the class probabilities in acts.prob), using ps (the
// fitted parameters, for the hidden layers' weights).
func (md *Model) softmaxJVP(ps *params, acts *activations, v, dst []float64) {
	n := len(acts.prob) / md.head.Outs
	var tan blas64.General // the tangent of layer l's input, nil for the data
	for l, ly := range md.layers {
		// dz_l = A_l W_v,l^T + 1 b_v,l^T + T_l W_l^T.
		dz := newGeneral(n, ly.out)
		b := ly.bias(v)
		for i := 0; i < n; i++ {
			copy(dz.Data[i*ly.out:(i+1)*ly.out], b)
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, rowsOf(acts.acts[l], n), ly.weights(v), 1, dz)
		if l > 0 {
			if ly.transposed() {
				blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, tan, ps.wt[l], 1, dz)
			} else {
				blas64.Gemm(blas.NoTrans, blas.Trans, 1, tan, ly.weights(ps.theta), 1, dz)
			}
		}
		if l+1 < len(md.layers) {
			// The ReLU's derivative: 1 where its output, acts[l+1], is not 0.
			nn.ReLUMask(dz.Data, acts.acts[l+1].Data[:n*ly.out])
		}
		tan = dz
	}
	nn.SoftmaxTimes(acts.prob, tan.Data, dst, md.head.Outs)
}

// softmaxVJP writes Phi^T u for u of n K values (row i*K + k) into dst
// (len M, zero on entry) from the forward pass acts of the n samples: the
// backward pass of the output signals S_i u_i.
func (md *Model) softmaxVJP(ps *params, acts *activations, u, dst []float64) {
	k := md.head.Outs
	n := len(acts.prob) / k
	dout := make([]float64, n*k)
	nn.SoftmaxTimes(acts.prob, u, dout, k)
	gradT := make([]blas64.General, len(md.layers))
	for l, ly := range md.layers {
		if ly.transposed() {
			gradT[l] = newGeneral(ly.in, ly.out)
		}
	}
	one := *acts
	one.rep = 1 // dout has a row per sample
	backward(md.layers, ps, &one, dout, newDeltas(md.layers, n), dst, gradT)
}
