package cnn

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

// dense locates a dense layer's weights (out x in, row-major) at theta[w:]
// and bias at theta[b:].
type dense struct{ in, out, w, b int }

// Model is a convolutional network: conv k x k (zero padding, stride 1) ->
// ReLU -> pooling -> dense ReLU layers -> output. See the package
// documentation.
type Model struct {
	head   nn.Head // task, outputs (K for multiclass, else 1), mu and sd
	inputs int
	seed   int64
	cfg    config

	h, w, hw  int // image
	k, kk     int // kernel size, k*k
	pad       int
	f         int // filters
	pool      int
	ho, wo    int // pooled image
	d         int // ho*wo*f, the flattened pooled features
	cw, cb    int // conv weights (f x kk) and bias (f) in theta
	layers    []dense
	m         int
	idx       []int32 // im2col gather: idx[pos*kk+t] = pixel, or -1 for padding
	poolStart []int32 // for each pooled position q, the first conv position of its window

	// Set by Fit (or WarmStart, with head.Mu, head.Sd), read-only afterwards.
	trained nn.Trained
	// memo keeps the forward passes of recent inputs at the fitted
	// parameters for the Jacobian products (see jvp.go); cleared when they
	// change, a new one for every model.
	memo *nn.Memo[*passes]
}

var (
	_ framework.Gradienter  = (*Model)(nil)
	_ framework.WarmStopper = (*Model)(nil)
)

// NewModel returns an untrained model for spec.
func NewModel(spec framework.ModelSpec) (*Model, error) {
	head, err := nn.NewHead("cnn", spec)
	if err != nil {
		return nil, err
	}
	cfg, err := parseOptions(spec.Options)
	if err != nil {
		return nil, err
	}
	h, w := cfg.imgH, cfg.imgW
	if h == 0 {
		s := int(math.Round(math.Sqrt(float64(spec.Inputs))))
		if s*s != spec.Inputs {
			return nil, framework.Usagef("cnn: %d inputs are not a square image; give the shape with --image HxW (option image)", spec.Inputs)
		}
		h, w = s, s
	}
	if h*w != spec.Inputs {
		return nil, framework.Usagef("cnn: image %dx%d has %d pixels, but there are %d inputs", h, w, h*w, spec.Inputs)
	}
	if cfg.pool > min(h, w) {
		return nil, framework.Usagef("cnn: option pool: window %d is larger than the %dx%d image", cfg.pool, h, w)
	}
	// The convolution's filters and the dense layers on its pooled output.
	sz := nn.DenseSize(float64(h/cfg.pool)*float64(w/cfg.pool)*float64(cfg.filters), cfg.hidden, head.Outs)
	sz.Params += float64(cfg.filters) * float64(cfg.kernel*cfg.kernel+1)
	sz.Units += float64(h*w) * float64(cfg.filters)
	if err := nn.CheckSize("cnn", fmt.Sprintf("options filters %d, hidden %s", cfg.filters, nn.JoinWidths(cfg.hidden)), sz, cfg.train.Batch); err != nil {
		return nil, err
	}
	md := &Model{head: head, inputs: spec.Inputs, seed: spec.Seed, cfg: cfg,
		h: h, w: w, hw: h * w, k: cfg.kernel, kk: cfg.kernel * cfg.kernel, pad: cfg.kernel / 2,
		f: cfg.filters, pool: cfg.pool, ho: h / cfg.pool, wo: w / cfg.pool, memo: new(nn.Memo[*passes])}
	md.d = md.ho * md.wo * md.f
	md.cw, md.cb = 0, md.f*md.kk
	md.m = md.cb + md.f
	in := md.d
	for _, out := range append(append([]int(nil), cfg.hidden...), head.Outs) {
		l := dense{in: in, out: out, w: md.m, b: md.m + in*out}
		md.layers = append(md.layers, l)
		md.m = l.b + out
		in = out
	}
	md.idx = make([]int32, md.hw*md.kk)
	for r := 0; r < h; r++ {
		for c := 0; c < w; c++ {
			for a := 0; a < md.k; a++ {
				for b := 0; b < md.k; b++ {
					rr, cc := r+a-md.pad, c+b-md.pad
					v := int32(-1)
					if rr >= 0 && rr < h && cc >= 0 && cc < w {
						v = int32(rr*w + cc)
					}
					md.idx[(r*w+c)*md.kk+a*md.k+b] = v
				}
			}
		}
	}
	md.poolStart = make([]int32, md.ho*md.wo)
	for pr := 0; pr < md.ho; pr++ {
		for pc := 0; pc < md.wo; pc++ {
			md.poolStart[pr*md.wo+pc] = int32(pr*md.pool*w + pc*md.pool)
		}
	}
	return md, nil
}

// NumParams returns M.
func (md *Model) NumParams() int { return md.m }

func (l dense) weights(theta []float64) blas64.General {
	return blas64.General{Rows: l.out, Cols: l.in, Stride: l.in, Data: theta[l.w : l.w+l.out*l.in]}
}

func (md *Model) convWeights(theta []float64) blas64.General {
	return blas64.General{Rows: md.f, Cols: md.kk, Stride: md.kk, Data: theta[md.cw : md.cw+md.f*md.kk]}
}

func gen(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data[:rows*cols]}
}

// pass holds one batched forward pass of up to cap rows.
type pass struct {
	n    int
	cols []float64   // n*hw x kk, the im2col patches
	conv []float64   // n*hw x f, ReLU outputs of the convolution
	arg  []int32     // max pooling: the conv entry that won, per pooled entry (n x d)
	acts [][]float64 // acts[l]: input of dense layer l (acts[0] the pooled n x d)
	out  []float64   // n x outs raw outputs
}

func (md *Model) newPass(rows int) *pass {
	p := &pass{cols: make([]float64, rows*md.hw*md.kk), conv: make([]float64, rows*md.hw*md.f),
		acts: make([][]float64, len(md.layers)), out: make([]float64, rows*md.head.Outs)}
	if md.cfg.maxPool {
		p.arg = make([]int32, rows*md.d)
	}
	for l, ly := range md.layers {
		p.acts[l] = make([]float64, rows*ly.in)
	}
	return p
}

// forward runs the network with parameters theta on the rows of x and
// returns the raw outputs (x.Rows x outs).
func (md *Model) forward(theta []float64, x blas64.General, p *pass) []float64 {
	n := x.Rows
	p.n = n
	hw, kk, f := md.hw, md.kk, md.f
	// im2col: a gather through the precomputed index table.
	for i := 0; i < n; i++ {
		xi := x.Data[i*x.Stride : i*x.Stride+hw]
		dst := p.cols[i*hw*kk : (i+1)*hw*kk]
		for t, j := range md.idx {
			if j >= 0 {
				dst[t] = xi[j]
			} else {
				dst[t] = 0
			}
		}
	}
	conv := gen(n*hw, f, p.conv)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen(n*hw, kk, p.cols), md.convWeights(theta), 0, conv)
	nn.BiasReLU(conv.Data, theta[md.cb:md.cb+f])
	md.poolForward(p)
	last := len(md.layers) - 1
	for l, ly := range md.layers {
		z := md.layerOut(p, l)
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, gen(n, ly.in, p.acts[l]), ly.weights(theta), 0, z)
		b := theta[ly.b : ly.b+ly.out]
		if l < last {
			nn.BiasReLU(z.Data, b)
		} else {
			addBias(z.Data, b)
		}
	}
	return p.out[:n*md.head.Outs]
}

// layerOut is where dense layer l of the pass p writes its output (p.n x
// out): the next layer's input, or the raw outputs for the last.
func (md *Model) layerOut(p *pass, l int) blas64.General {
	if l < len(md.layers)-1 {
		return gen(p.n, md.layers[l].out, p.acts[l+1])
	}
	return gen(p.n, md.layers[l].out, p.out)
}

// poolForward pools p.conv into p.acts[0]: entry (i, q*f + c) is the max
// (or mean) of filter c over pooled window q of sample i.
func (md *Model) poolForward(p *pass) {
	f, ps, w := md.f, md.pool, md.w
	pooled := p.acts[0]
	for i := 0; i < p.n; i++ {
		base := i * md.hw
		for q, start := range md.poolStart {
			dst := pooled[(i*len(md.poolStart)+q)*f : (i*len(md.poolStart)+q+1)*f]
			first := (base + int(start)) * f
			copy(dst, p.conv[first:first+f])
			if md.cfg.maxPool {
				arg := p.arg[(i*len(md.poolStart)+q)*f : (i*len(md.poolStart)+q+1)*f]
				for c := range arg {
					arg[c] = int32(first + c)
				}
				for u := 0; u < ps; u++ {
					for v := 0; v < ps; v++ {
						if u == 0 && v == 0 {
							continue
						}
						off := (base + int(start) + u*w + v) * f
						for c, val := range p.conv[off : off+f] {
							if val > dst[c] {
								dst[c] = val
								arg[c] = int32(off + c)
							}
						}
					}
				}
				continue
			}
			md.avgWindow(dst, p.conv, base+int(start))
		}
	}
}

// avgWindow completes dst (holding the window's first position, f values)
// into the mean of src (a pass's n*hw x f conv-shaped values) over the
// pooling window starting at conv position pos.
func (md *Model) avgWindow(dst, src []float64, pos int) {
	f, ps, w := md.f, md.pool, md.w
	for u := 0; u < ps; u++ {
		for v := 0; v < ps; v++ {
			if u == 0 && v == 0 {
				continue
			}
			off := (pos + u*w + v) * f
			for c, val := range src[off : off+f] {
				dst[c] += val
			}
		}
	}
	inv := 1 / float64(ps*ps)
	for c := range dst {
		dst[c] *= inv
	}
}

// signals are the backpropagated signals of a pass: dd[l] (n x out_l) at
// the output of dense layer l, dconv (n*hw x f) at the convolution's
// output before the ReLU.
type signals struct {
	dd    [][]float64
	dconv []float64
}

func (md *Model) newSignals(rows int) *signals {
	s := &signals{dd: make([][]float64, len(md.layers)), dconv: make([]float64, rows*md.hw*md.f)}
	for l, ly := range md.layers {
		if l < len(md.layers)-1 {
			s.dd[l] = make([]float64, rows*ly.out)
		}
	}
	return s
}

// backward propagates dout (n x outs) through the pass p; when grad is not
// nil it adds the parameter gradient summed over the rows to it. dpool is
// scratch of n*d.
func (md *Model) backward(theta []float64, p *pass, dout []float64, s *signals, grad, dpool []float64) {
	n := p.n
	last := len(md.layers) - 1
	s.dd[last] = dout[:n*md.head.Outs]
	for l := last; l >= 0; l-- {
		ly := md.layers[l]
		d := gen(n, ly.out, s.dd[l])
		act := gen(n, ly.in, p.acts[l])
		if grad != nil {
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, d, act, 1, ly.weights(grad))
			nn.ColSums(grad[ly.b:ly.b+ly.out], d)
		}
		var prev blas64.General
		if l > 0 {
			prev = gen(n, ly.in, s.dd[l-1])
		} else {
			prev = gen(n, ly.in, dpool)
		}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, d, ly.weights(theta), 0, prev)
		if l > 0 {
			nn.ReLUMask(prev.Data, act.Data)
		}
	}
	// Unpool into dconv, then the ReLU mask of the convolution.
	dconv := s.dconv[:n*md.hw*md.f]
	clear(dconv)
	f, ps, w := md.f, md.pool, md.w
	if md.cfg.maxPool {
		for e, v := range dpool[:n*md.d] {
			dconv[p.arg[e]] += v
		}
	} else {
		inv := 1 / float64(ps*ps)
		nq := len(md.poolStart)
		for i := 0; i < n; i++ {
			for q, start := range md.poolStart {
				src := dpool[(i*nq+q)*f : (i*nq+q+1)*f]
				for u := 0; u < ps; u++ {
					for v := 0; v < ps; v++ {
						off := (i*md.hw + int(start) + u*w + v) * f
						for c, g := range src {
							dconv[off+c] += g * inv
						}
					}
				}
			}
		}
	}
	nn.ReLUMask(dconv, p.conv[:n*md.hw*md.f])
	if grad != nil {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, gen(n*md.hw, f, dconv), gen(n*md.hw, md.kk, p.cols), 1, md.convWeights(grad))
		nn.ColSums(grad[md.cb:md.cb+f], gen(n*md.hw, f, dconv))
	}
}

func (md *Model) input(x mat.Matrix) (blas64.General, error) { return nn.Input("cnn", x, md.inputs) }

// Params returns a copy of the fitted parameters in the documented order.
func (md *Model) Params() []float64 { return md.trained.Params() }

// Epochs returns the number of epochs Fit ran.
func (md *Model) Epochs() int { return md.trained.Epochs() }

// FitReport implements framework.FitReporter: epochs run, what ended
// training, and the loss on the validation slice at the kept parameters.
func (md *Model) FitReport() framework.FitReport { return md.trained.FitReport() }

func (md *Model) ready(ctx context.Context) error { return nn.Ready(ctx, "cnn", md.trained.Fitted) }

// predictBlock bounds the rows of one forward pass in the training's full
// loss (memory).
const predictBlock = 512

// predict runs the forward passes in blocks of productBlock rows, as the
// products' passes (the memo's) do: gonum's Gemm sums a layer's inputs
// beyond 64 in chunks of 64 when it runs in parallel and all at once when
// the block's rows are too few for that, so passes over other blocks may
// differ in the last bits, and PredictPrepared would not be Predict to the
// bit (TestPredictPreparedBlocks).
func (md *Model) predict(theta []float64, x blas64.General) *mat.Dense {
	n := x.Rows
	out := make([]float64, n*md.head.Outs)
	p := md.newPass(min(n, productBlock))
	for i0 := 0; i0 < n; i0 += productBlock {
		rows := min(productBlock, n-i0)
		xb := blas64.General{Rows: rows, Cols: x.Cols, Stride: x.Stride, Data: x.Data[i0*x.Stride:]}
		copy(out[i0*md.head.Outs:], md.forward(theta, xb, p))
	}
	md.head.Link(out, nil)
	return mat.NewDense(n, md.head.Outs, out)
}

// Predict returns the predictions: n x 1 means (regression) or P(Y = 1)
// (binary), n x K class probabilities (multiclass).
func (md *Model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	theta, xg, err := md.trained.PredictArgs(ctx, "cnn", false, nil, x, md.inputs)
	if err != nil {
		return nil, err
	}
	return md.predict(theta, xg), nil
}

// PredictShifted returns the predictions at theta + dtheta.
func (md *Model) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	theta, xg, err := md.trained.PredictArgs(ctx, "cnn", true, dtheta, x, md.inputs)
	if err != nil {
		return nil, err
	}
	return md.predict(theta, xg), nil
}

// Jacobian returns the per-sample gradients of the predictions (for
// multiclass K rows per sample, row i*K + k the gradient of P(Y_i = k)).
func (md *Model) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	rowsPer := md.head.RowsPerSample()
	n := xg.Rows * rowsPer
	jac := make([]float64, n*md.m)
	// Blocks of samples bound the pass's memory.
	const block = 64
	for s0 := 0; s0 < xg.Rows; s0 += block {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cnn: Jacobian: %w", err)
		}
		ns := min(block, xg.Rows-s0)
		xb := blas64.General{Rows: ns, Cols: xg.Cols, Stride: xg.Stride, Data: xg.Data[s0*xg.Stride:]}
		p, s := md.signalsOf(xb)
		for r := 0; r < p.n; r++ {
			md.jacobianRow(jac[(s0*rowsPer+r)*md.m:(s0*rowsPer+r+1)*md.m], p, s, r)
		}
	}
	return mat.NewDense(n, md.m, jac), nil
}

// jacobianRow writes row r's gradient from the pass and its signals.
func (md *Model) jacobianRow(row []float64, p *pass, s *signals, r int) {
	for l, ly := range md.layers {
		act := p.acts[l][r*ly.in : (r+1)*ly.in]
		d := s.dd[l][r*ly.out : (r+1)*ly.out]
		for o, dv := range d {
			wr := row[ly.w+o*ly.in : ly.w+(o+1)*ly.in]
			for k, av := range act {
				wr[k] = dv * av
			}
		}
		copy(row[ly.b:ly.b+ly.out], d)
	}
	dc := gen(md.hw, md.f, s.dconv[r*md.hw*md.f:])
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, dc, gen(md.hw, md.kk, p.cols[r*md.hw*md.kk:]), 0,
		gen(md.f, md.kk, row[md.cw:]))
	nn.ColSums(row[md.cb:md.cb+md.f], dc)
}

// signalsOf runs the forward pass at the fitted parameters and
// backpropagates d prediction / d raw output; for multiclass every sample
// is repeated K times, its k-th copy carrying the softmax Jacobian's row
// p_k (e_k - p).
func (md *Model) signalsOf(x blas64.General) (*pass, *signals) {
	if md.head.Task != framework.Multiclass {
		n := x.Rows
		p := md.newPass(n)
		out := md.forward(md.trained.Theta, x, p)
		scale := make([]float64, n)
		md.head.Link(append([]float64(nil), out...), scale)
		s := md.newSignals(n)
		md.backward(md.trained.Theta, p, scale, s, nil, make([]float64, n*md.d))
		return p, s
	}
	xr := nn.RepeatRows(x, md.head.Outs)
	p := md.newPass(xr.Rows)
	out := md.forward(md.trained.Theta, xr, p)
	dout := md.head.SoftmaxSignals(out, x.Rows, md.head.Outs*md.head.Outs)
	s := md.newSignals(xr.Rows)
	md.backward(md.trained.Theta, p, dout, s, nil, make([]float64, xr.Rows*md.d))
	return p, s
}
