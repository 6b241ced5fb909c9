package mlp

import (
	"context"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/scratch"
)

// layer locates one dense layer's parameters in the flat vector theta: the
// weights W (out x in, row-major) at theta[w:w+out*in], then the bias b at
// theta[b:b+out].
type layer struct {
	in, out int
	w, b    int
}

// Model is a fully connected ReLU network with one output (K softmax outputs
// for multiclass). See the package documentation for the parameterisation,
// the training procedure and the concurrency guarantees.
type Model struct {
	head   nn.Head // task, outputs (K for multiclass, else 1), mu and sd
	inputs int
	seed   int64
	cfg    config

	layers []layer // hidden layers, then the output layer (out = outs)
	m      int     // number of parameters

	// Set by Fit (with head.Mu, head.Sd) and read-only afterwards.
	trained nn.Trained

	memo nn.Memo[signalsEntry] // signals of recent inputs at theta (see memo.go)
}

var (
	_ framework.Gradienter  = (*Model)(nil)
	_ framework.Kerneler    = (*Model)(nil)
	_ framework.WarmStopper = (*Model)(nil)
	_ framework.FitReporter = (*Model)(nil)
)

// NewModel returns an untrained model for spec; Backend.New is the same
// with the result as a framework.Model.
func NewModel(spec framework.ModelSpec) (*Model, error) {
	head, err := nn.NewHead("mlp", spec)
	if err != nil {
		return nil, err
	}
	cfg, err := parseOptions(spec.Options)
	if err != nil {
		return nil, err
	}
	if err := nn.CheckSize("mlp", "option hidden "+nn.JoinWidths(cfg.hidden), nn.DenseSize(float64(spec.Inputs), cfg.hidden, head.Outs), cfg.train.Batch); err != nil {
		return nil, err
	}
	md := &Model{head: head, inputs: spec.Inputs, seed: spec.Seed, cfg: cfg}
	in := spec.Inputs
	widths := append(append([]int(nil), cfg.hidden...), head.Outs)
	for _, out := range widths {
		l := layer{in: in, out: out, w: md.m, b: md.m + out*in}
		md.layers = append(md.layers, l)
		md.m = l.b + out
		in = out
	}
	return md, nil
}

// NumParams returns the number of parameters M.
func (md *Model) NumParams() int { return md.m }

// Params returns a copy of the parameters in the documented flat order.
func (md *Model) Params() []float64 { return md.trained.Params() }

// weights returns layer l's weights in theta as an out x in matrix.
func (l layer) weights(theta []float64) blas64.General {
	return blas64.General{Rows: l.out, Cols: l.in, Stride: l.in, Data: theta[l.w : l.w+l.out*l.in]}
}

func (l layer) bias(theta []float64) []float64 { return theta[l.b : l.b+l.out] }

// newGeneral allocates a zeroed rows x cols matrix.
func newGeneral(rows, cols int) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: make([]float64, rows*cols)}
}

// rowsOf returns the first n rows of g.
func rowsOf(g blas64.General, n int) blas64.General {
	g.Rows = n
	if n == 0 {
		g.Data = g.Data[:0]
		return g
	}
	g.Data = g.Data[:(n-1)*g.Stride+g.Cols]
	return g
}

// input returns x as a row-major matrix without copying when x is a
// *mat.Dense (or another mat.RawMatrixer), checking its column count.
func (md *Model) input(x mat.Matrix) (blas64.General, error) { return nn.Input("mlp", x, md.inputs) }

// Epochs returns the number of epochs Fit ran.
func (md *Model) Epochs() int { return md.trained.Epochs() }

// LossCurve returns the loss early stopping watched after each epoch of
// Fit: on the validation slice (option valid), or on the full training set
// without one (mean squared error on the standardised response for
// regression, mean log-loss for binary).
func (md *Model) LossCurve() []float64 { return md.trained.LossCurve() }

// FitReport implements framework.FitReporter: epochs run, what ended
// training, and the loss on the validation slice at the kept parameters.
func (md *Model) FitReport() framework.FitReport { return md.trained.FitReport() }

func (md *Model) ready(ctx context.Context) error { return nn.Ready(ctx, "mlp", md.trained.Fitted) }

// activations holds the batched forward pass: acts[l] is the input of layer
// l (acts[0] the data, acts[l] for l >= 1 the ReLU activations of hidden
// layer l), out the network's raw outputs (the logit for binary; rows x K
// logits, row-major, for multiclass).
//
// rep is the number of backprop signals' rows per row of acts (0 means 1):
// K for a multiclass model's (multiDeltas), which have a row per sample
// and class (row i*K + k) while the K rows of a sample share its
// activations, so these are held, and multiplied in the kernel's Grams,
// once per sample.
//
// prob, for a multiclass model's forward pass at the fitted parameters
// (signals), holds the class probabilities (rows x K), for the products
// with the Jacobian (softmaxjvp.go).
type activations struct {
	acts []blas64.General
	out  []float64
	rep  int
	prob []float64
}

// rowsPer is the number of signal rows per row of acts (see rep).
func (a *activations) rowsPer() int { return max(a.rep, 1) }

func newActivations(layers []layer, rows int) *activations {
	a := &activations{acts: make([]blas64.General, len(layers))}
	for l := 1; l < len(layers); l++ {
		a.acts[l] = newGeneral(rows, layers[l].in)
	}
	a.out = make([]float64, rows*layers[len(layers)-1].out)
	return a
}

// params is a parameter vector with, for the layers that are wider than
// their input, a transposed copy of the weights (in x out). The products
// below are then arranged so that gonum's inner loops (axpy or dot) run
// along the longer of in and out, which for a narrow input layer is
// several times faster than the other orientation.
type params struct {
	theta []float64
	wt    []blas64.General // wt[l].Data is nil unless layers[l].transposed()
}

// transposed reports whether the layer works with W^T.
func (l layer) transposed() bool { return l.in < l.out }

func newParams(layers []layer, theta []float64) *params {
	ps := &params{theta: theta, wt: make([]blas64.General, len(layers))}
	for l, ly := range layers {
		if ly.transposed() {
			ps.wt[l] = newGeneral(ly.in, ly.out)
		}
	}
	ps.refresh(layers)
	return ps
}

// refresh recomputes the transposed weights after theta changed.
func (ps *params) refresh(layers []layer) {
	for l, ly := range layers {
		if !ly.transposed() {
			continue
		}
		w, wt := ly.weights(ps.theta), ps.wt[l]
		for o := 0; o < ly.out; o++ {
			for i, v := range w.Data[o*ly.in : (o+1)*ly.in] {
				wt.Data[i*ly.out+o] = v
			}
		}
	}
}

// forward runs the network with parameters ps on the rows of x, writing
// into a (sized for at least x.Rows rows), and returns the raw outputs
// (x.Rows x K row-major).
func forward(layers []layer, ps *params, x blas64.General, a *activations) []float64 {
	n := x.Rows
	a.acts[0] = x
	outs := layers[len(layers)-1].out
	for l, ly := range layers {
		var z blas64.General
		if l+1 < len(layers) {
			z = rowsOf(a.acts[l+1], n)
		} else {
			z = blas64.General{Rows: n, Cols: outs, Stride: outs, Data: a.out[:n*outs]}
		}
		in := rowsOf(a.acts[l], n)
		if ly.transposed() {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, in, ps.wt[l], 0, z)
		} else {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, in, ly.weights(ps.theta), 0, z)
		}
		b := ly.bias(ps.theta)
		if l+1 < len(layers) {
			nn.BiasReLU(z.Data[:n*z.Stride], b)
		} else {
			for i := range z.Data {
				z.Data[i] += b[i%outs]
			}
		}
	}
	return a.out[:n*outs]
}

// backward propagates the per-sample output signals dout (n x K, row-major) through
// the network whose forward pass is in a, writing the signal at each layer's
// output (before the ReLU, i.e. d out / d z_l per sample, times dout) into
// deltas[l] (n x layers[l].out); with a.rep > 1, row i of dout and of the
// deltas belongs to row i / a.rep of a. If grad is not nil (a.rep must be
// 1 then), it also adds to it
// (with the layout of theta) the parameter gradient summed over the samples:
// dW_l = delta_l^T A_l, db_l = delta_l^T 1; gradT is then scratch of
// ps.wt's shapes for the transposed layers.
func backward(layers []layer, ps *params, a *activations, dout []float64, deltas []blas64.General, grad []float64, gradT []blas64.General) {
	last := len(layers) - 1
	outs := layers[last].out
	n := len(dout) / outs
	deltas[last] = blas64.General{Rows: n, Cols: outs, Stride: outs, Data: dout}
	for l := last; l >= 0; l-- {
		ly := layers[l]
		d := rowsOf(deltas[l], n)
		if grad != nil {
			act := rowsOf(a.acts[l], n)
			gw := ly.weights(grad)
			if ly.transposed() {
				// dW^T = A^T delta: axpys of length out.
				gt := gradT[l]
				blas64.Gemm(blas.Trans, blas.NoTrans, 1, act, d, 0, gt)
				for i := 0; i < ly.in; i++ {
					for o, v := range gt.Data[i*ly.out : (i+1)*ly.out] {
						gw.Data[o*ly.in+i] += v
					}
				}
			} else {
				blas64.Gemm(blas.Trans, blas.NoTrans, 1, d, act, 1, gw)
			}
			nn.ColSums(ly.bias(grad), d)
		}
		if l == 0 {
			break
		}
		prev := rowsOf(deltas[l-1], n)
		if ly.transposed() {
			blas64.Gemm(blas.NoTrans, blas.Trans, 1, d, ps.wt[l], 0, prev)
		} else {
			blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, d, ly.weights(ps.theta), 0, prev)
		}
		// ReLU mask: relu(z) > 0 exactly when z > 0.
		if rep := a.rowsPer(); rep == 1 {
			nn.ReLUMask(prev.Data[:n*prev.Stride], a.acts[l].Data[:n*prev.Stride])
		} else {
			act := a.acts[l]
			for i := 0; i < n; i++ {
				nn.ReLUMask(prev.Data[i*prev.Stride:i*prev.Stride+prev.Cols], act.Data[i/rep*act.Stride:])
			}
		}
	}
}

// newDeltas allocates the backprop signals of the hidden layers for rows
// samples; the output layer's signal is the caller's dout.
func newDeltas(layers []layer, rows int) []blas64.General {
	d := make([]blas64.General, len(layers))
	for l := 0; l+1 < len(layers); l++ {
		d[l] = newGeneral(rows, layers[l].out)
	}
	return d
}

// predict returns the predictions with parameters theta, predictChunkRows
// rows at a time: a row's outputs depend on that row alone, and every
// layer's product sums over its inputs in the same order whatever the
// number of rows, so the chunks' outputs are the whole pass's, while the
// hidden layers' activations take a chunk's memory instead of n rows'
// (8 MB for 3333 rows of (200, 100), touched fresh by every call). The
// chunk's buffer comes from predictScratch; the outputs are the result's
// own.
func (md *Model) predict(theta []float64, x blas64.General) *mat.Dense {
	n := x.Rows
	outs := md.layers[len(md.layers)-1].out
	out := make([]float64, n*outs)
	rows := min(predictChunkRows, n)
	size := 0
	for _, ly := range md.layers[1:] {
		size += rows * ly.in
	}
	buf := predictScratch.Take(size)
	a := &activations{acts: make([]blas64.General, len(md.layers))}
	for l, off := 1, 0; l < len(md.layers); l++ {
		in := md.layers[l].in
		a.acts[l] = blas64.General{Rows: rows, Cols: in, Stride: in, Data: buf[off : off+rows*in]}
		off += rows * in
	}
	ps := newParams(md.layers, theta)
	for i0 := 0; i0 < n; i0 += rows {
		r := min(rows, n-i0)
		a.out = out[i0*outs : (i0+r)*outs]
		forward(md.layers, ps, sub(x, i0, r), a)
	}
	predictScratch.Put(buf)
	md.head.Link(out, nil)
	return mat.NewDense(n, md.head.Outs, out)
}

// predictChunkRows is the number of rows predict passes through the
// network at a time.
const predictChunkRows = 256

// predictScratch keeps predict's chunk buffers between calls (the lazy
// estimator's penalty search predicts a fold's held-out rows at every
// candidate penalty). forward writes every value it reads, so what a
// buffer held before does not matter.
var predictScratch = scratch.New[float64](2 * time.Second)

// Predict returns the n x 1 predictions: the mean mu + sd*net(x) for
// regression, sigmoid(net(x)) = P(Y = 1) for binary; n x K softmax class
// probabilities for multiclass.
func (md *Model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	theta, xg, err := md.trained.PredictArgs(ctx, "mlp", false, nil, x, md.inputs)
	if err != nil {
		return nil, err
	}
	return md.predict(theta, xg), nil
}

// PredictShifted returns the predictions at theta + dtheta; theta is left
// unchanged.
func (md *Model) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	theta, xg, err := md.trained.PredictArgs(ctx, "mlp", true, dtheta, x, md.inputs)
	if err != nil {
		return nil, err
	}
	return md.predict(theta, xg), nil
}

// signals runs the forward pass at the fitted parameters and backpropagates
// d prediction / d raw output, so that the per-sample gradient of the
// prediction w.r.t. layer l's weights is the outer product of row i of
// deltas[l] and row i of a.acts[l]. For multiclass it runs the forward
// pass only and returns nil deltas: the products with the Jacobian need
// the activations and the class probabilities (softmaxjvp.go), the kernel
// and the Jacobian the signals of multiDeltas.
func (md *Model) signals(x blas64.General) (*activations, []blas64.General) {
	n := x.Rows
	a := newActivations(md.layers, n)
	ps := newParams(md.layers, md.trained.Theta)
	out := forward(md.layers, ps, x, a)
	if md.head.Task == framework.Multiclass {
		a.rep = md.head.Outs
		a.prob = append([]float64(nil), out...)
		md.head.Link(a.prob, nil)
		return a, nil
	}
	scale := make([]float64, n)
	md.head.Link(append([]float64(nil), out...), scale)
	deltas := newDeltas(md.layers, n)
	backward(md.layers, ps, a, scale, deltas, nil, nil)
	return a, deltas
}

// multiDeltas returns a multiclass model's backprop signals for its forward
// pass a (signals): K rows per sample, row i*K + k carrying the gradient of
// P(Y = k), whose output signal is the softmax Jacobian's row, p_k (e_k -
// p); the K rows of a sample share its row of a (a.rep = K).
func (md *Model) multiDeltas(a *activations) []blas64.General {
	k := md.head.Outs
	n := len(a.out) / k
	dout := md.head.SoftmaxSignals(a.out, n, k)
	deltas := newDeltas(md.layers, n*k)
	backward(md.layers, newParams(md.layers, md.trained.Theta), a, dout, deltas, nil, nil)
	return deltas
}
