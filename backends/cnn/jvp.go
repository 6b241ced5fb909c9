package cnn

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

var _ framework.JacobianMultiplier = (*Model)(nil)

// The products go through the network one block of samples at a time (a
// forward pass at the fitted parameters, then one pass per vector), never
// forming the Jacobian and never repeating a sample per class:
//
//	Phi V:   forward mode, the parameters' tangent v carried through the
//	         layers (conv: patches times the filters' tangent, masked by
//	         the ReLU; max pooling: the tangent at the window's argmax;
//	         dense: tangent in times W plus input times W's tangent), then
//	         the link's derivative (multiclass: the softmax Jacobian, so
//	         row i*K + k is p_k (dz_k - p . dz));
//	Phi^T U: one backward pass with the link's derivative applied to the
//	         rows' weights u as the output gradient (multiclass: sample
//	         i's K rows combined, p_j (u_ij - p . u_i)), summed over rows.
//
// Each costs about a forward pass per vector (the tangent takes two
// products per dense layer), plus the forward pass at the
// fitted parameters: kept in the model's memo (nn.Memo, with the mlp's
// budget) when all the input's blocks fit it, as they do for lazy's rows
// on digits.csv (1198 images of 8x8: 20 MB), else recomputed per call one
// block at a time (O(block x H W x (k k + F)) values).

// productBlock bounds the samples of one pass in the products (memory).
const productBlock = 256

// passes are the forward passes of an input's blocks of productBlock
// samples at the fitted parameters, with each block's link derivatives
// (see forwardLink); read-only once built.
type passes struct {
	blocks []*pass
	links  [][]float64
}

// JacobianMul returns Phi(x) V for V of M x p (framework.JacobianMultiplier).
func (md *Model) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	xg, err := md.productArgs(ctx, "JacobianMul", x, v, md.m)
	if err != nil {
		return nil, err
	}
	_, pv := v.Dims()
	rowsPer := md.head.RowsPerSample()
	out := mat.NewDense(xg.Rows*rowsPer, pv, nil)
	vs := columns(v)
	t := md.newPass(min(productBlock, xg.Rows))
	err = md.eachBlock(ctx, "JacobianMul", xg, func(s0 int, p *pass, link []float64) error {
		for c, vc := range vs {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("cnn: JacobianMul: %w", err)
			}
			dz := md.tangent(vc, p, t)
			md.linkTimes(link[:len(dz)], dz)
			for r, val := range dz {
				out.Set(s0*rowsPer+r, c, val)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// JacobianTMul returns Phi(x)^T U for U of (n K) x p
// (framework.JacobianMultiplier).
func (md *Model) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	xg, err := md.productArgs(ctx, "JacobianTMul", x, u, -1)
	if err != nil {
		return nil, err
	}
	_, pu := u.Dims()
	outs, rowsPer := md.head.Outs, md.head.RowsPerSample()
	grads := mat.NewDense(pu, md.m, nil) // row c: Phi^T u_c
	rows := min(productBlock, xg.Rows)
	s := md.newSignals(rows)
	dpool := make([]float64, rows*md.d)
	dout := make([]float64, rows*outs)
	err = md.eachBlock(ctx, "JacobianTMul", xg, func(s0 int, p *pass, link []float64) error {
		for c := 0; c < pu; c++ {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("cnn: JacobianTMul: %w", err)
			}
			d := dout[:p.n*outs]
			for r := range d {
				d[r] = u.At(s0*rowsPer+r, c)
			}
			md.linkTimes(link[:len(d)], d)
			md.backward(md.trained.Theta, p, dout, s, grads.RawRowView(c), dpool)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return mat.DenseCopyOf(grads.T()), nil
}

// productArgs checks a product's arguments (rows of v: want, or the
// Jacobian's rows when want < 0) and returns the input.
func (md *Model) productArgs(ctx context.Context, op string, x mat.Matrix, v *mat.Dense, want int) (blas64.General, error) {
	if err := md.ready(ctx); err != nil {
		return blas64.General{}, err
	}
	xg, err := md.input(x)
	if err != nil {
		return blas64.General{}, err
	}
	if want < 0 {
		want = xg.Rows * md.head.RowsPerSample()
	}
	if r, c := v.Dims(); r != want || c < 1 {
		return blas64.General{}, fmt.Errorf("cnn: %s: %d x %d vectors, want %d rows", op, r, c, want)
	}
	return xg, nil
}

// eachBlock calls do with each block of productBlock samples of x: its
// first sample, its forward pass at the fitted parameters and its link
// derivatives (forwardLink). The passes come from the memo when all of x's
// fit its budget, else are computed one block at a time.
func (md *Model) eachBlock(ctx context.Context, op string, x blas64.General, do func(s0 int, p *pass, link []float64) error) error {
	if md.passBytes(x) <= nn.MemoBudget {
		ps, err := md.passesOf(ctx, op, x)
		if err != nil {
			return err
		}
		for b, p := range ps.blocks {
			if err := do(b*productBlock, p, ps.links[b]); err != nil {
				return err
			}
		}
		return nil
	}
	rows := min(productBlock, x.Rows)
	p := md.newPass(rows)
	link := make([]float64, rows*md.head.Outs)
	for s0 := 0; s0 < x.Rows; s0 += productBlock {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("cnn: %s: %w", op, err)
		}
		xb := block(x, s0)
		md.forwardLink(xb, p, link)
		if err := do(s0, p, link[:xb.Rows*md.head.Outs]); err != nil {
			return err
		}
	}
	return nil
}

// block returns the rows of x from s0, at most productBlock of them.
func block(x blas64.General, s0 int) blas64.General {
	return blas64.General{Rows: min(productBlock, x.Rows-s0), Cols: x.Cols, Stride: x.Stride, Data: x.Data[s0*x.Stride:]}
}

// passBytes is the memory of x's passes in the memo, the private copy of
// x included.
func (md *Model) passBytes(x blas64.General) int {
	perSample := md.hw*(md.kk+md.f) + 2*md.head.Outs + x.Cols
	for _, ly := range md.layers {
		perSample += ly.in
	}
	bytes := 8 * perSample
	if md.cfg.maxPool {
		bytes += 4 * md.d
	}
	return bytes * x.Rows
}

// passesOf returns the passes of x from the memo, computing and storing
// them when they are not there. The result is shared: callers must not
// write it.
func (md *Model) passesOf(ctx context.Context, op string, x blas64.General) (*passes, error) {
	return md.memo.Values(x, func(xc blas64.General) (*passes, int, error) {
		ps := &passes{}
		for s0 := 0; s0 < xc.Rows; s0 += productBlock {
			if err := ctx.Err(); err != nil {
				return nil, 0, fmt.Errorf("cnn: %s: %w", op, err)
			}
			xb := block(xc, s0)
			p, link := md.newPass(xb.Rows), make([]float64, xb.Rows*md.head.Outs)
			md.forwardLink(xb, p, link)
			ps.blocks, ps.links = append(ps.blocks, p), append(ps.links, link)
		}
		return ps, md.passBytes(xc), nil
	})
}

// forwardLink runs the forward pass of x (at most p's capacity of rows) at
// the fitted parameters into p and writes the link's derivative of each
// sample's outputs into link: the class probabilities for multiclass, else
// d prediction / d raw output.
func (md *Model) forwardLink(x blas64.General, p *pass, link []float64) {
	raw := md.forward(md.trained.Theta, x, p)
	link = link[:len(raw)]
	if md.head.Task == framework.Multiclass {
		copy(link, raw)
		md.head.Link(link, nil)
		return
	}
	md.head.Link(append([]float64(nil), raw...), link)
}

// linkTimes multiplies w (a block's raw outputs' tangents or gradients,
// p.n x outs) in place by the link's derivative (symmetric for every task):
// link holds the class probabilities for multiclass, else d prediction / d
// raw output.
func (md *Model) linkTimes(link, w []float64) {
	if md.head.Task == framework.Multiclass {
		nn.SoftmaxTimes(link, w, w, md.head.Outs)
		return
	}
	floats.Mul(w, link)
}

// tangent returns the raw outputs' tangent (p.n x outs, in t.out) along
// the parameters' direction v at the pass p of the fitted parameters; t
// is a pass of p's capacity used for the tangents.
func (md *Model) tangent(v []float64, p, t *pass) []float64 {
	n, hw, f := p.n, md.hw, md.f
	t.n = n
	conv := gen(n*hw, f, t.conv)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen(n*hw, md.kk, p.cols), md.convWeights(v), 0, conv)
	addBias(conv.Data, v[md.cb:md.cb+f])
	nn.ReLUMask(conv.Data, p.conv)
	pooled := t.acts[0][:n*md.d]
	if md.cfg.maxPool {
		for e, a := range p.arg[:n*md.d] {
			pooled[e] = conv.Data[a]
		}
	} else {
		nq := len(md.poolStart)
		for i := 0; i < n; i++ {
			for q, start := range md.poolStart {
				pos := i*hw + int(start)
				dst := pooled[(i*nq+q)*f : (i*nq+q+1)*f]
				copy(dst, conv.Data[pos*f:(pos+1)*f])
				md.avgWindow(dst, conv.Data, pos)
			}
		}
	}
	last := len(md.layers) - 1
	for l, ly := range md.layers {
		z := md.layerOut(t, l)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen(n, ly.in, t.acts[l]), ly.weights(md.trained.Theta), 0, z)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen(n, ly.in, p.acts[l]), ly.weights(v), 1, z)
		addBias(z.Data, v[ly.b:ly.b+ly.out])
		if l < last {
			nn.ReLUMask(z.Data, p.acts[l+1])
		}
	}
	return t.out[:n*md.head.Outs]
}

// addBias adds b to every row of z (len(b) columns).
func addBias(z, b []float64) {
	for i := 0; i+len(b) <= len(z); i += len(b) {
		floats.Add(z[i:i+len(b)], b)
	}
}

// columns returns the columns of v as contiguous slices.
func columns(v *mat.Dense) [][]float64 {
	r, c := v.Dims()
	out := make([][]float64, c)
	for j := range out {
		out[j] = mat.Col(make([]float64, r), j, v)
	}
	return out
}
