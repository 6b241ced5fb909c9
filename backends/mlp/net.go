package mlp

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// layer locates one dense layer's parameters in the flat vector theta: the
// weights W (out x in, row-major) at theta[w:w+out*in], then the bias b at
// theta[b:b+out].
type layer struct {
	in, out int
	w, b    int
}

// Model is a fully connected ReLU network with one output. See the package
// documentation for the parameterisation, the training procedure and the
// concurrency guarantees.
type Model struct {
	task   framework.Task
	inputs int
	seed   int64
	cfg    config

	layers []layer // hidden layers, then the output layer (out = 1)
	m      int     // number of parameters

	// Set by Fit and read-only afterwards.
	theta  []float64
	mu, sd float64 // regression: prediction = mu + sd*net(x)
	fitted bool
	epochs int       // epochs run by Fit
	losses []float64 // full training loss after each epoch
}

var (
	_ framework.Gradienter = (*Model)(nil)
	_ framework.Kerneler   = (*Model)(nil)
)

// NewModel returns an untrained model for spec; Backend.New is the same
// with the result as a framework.Model.
func NewModel(spec framework.ModelSpec) (*Model, error) {
	if spec.Task != framework.Regression && spec.Task != framework.Binary {
		return nil, framework.Usagef("mlp: unsupported task %v", spec.Task)
	}
	if spec.Inputs < 1 {
		return nil, framework.Usagef("mlp: model needs at least one input column, got %d", spec.Inputs)
	}
	cfg, err := parseOptions(spec.Options)
	if err != nil {
		return nil, err
	}
	md := &Model{task: spec.Task, inputs: spec.Inputs, seed: spec.Seed, cfg: cfg}
	in := spec.Inputs
	widths := append(append([]int(nil), cfg.hidden...), 1)
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
func (md *Model) Params() []float64 { return append([]float64(nil), md.theta...) }

// Epochs returns the number of epochs Fit ran.
func (md *Model) Epochs() int { return md.epochs }

// LossCurve returns the full training loss after each epoch of Fit (mean
// squared error on the standardised response for regression, mean log-loss
// for binary).
func (md *Model) LossCurve() []float64 { return append([]float64(nil), md.losses...) }

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
func (md *Model) input(x mat.Matrix) (blas64.General, error) {
	if x == nil {
		return blas64.General{}, errors.New("mlp: nil input matrix")
	}
	r, c := x.Dims()
	if c != md.inputs {
		return blas64.General{}, fmt.Errorf("mlp: input has %d columns, model expects %d", c, md.inputs)
	}
	if r == 0 {
		return blas64.General{}, errors.New("mlp: input has no rows")
	}
	if rm, ok := x.(mat.RawMatrixer); ok {
		return rm.RawMatrix(), nil
	}
	return mat.DenseCopyOf(x).RawMatrix(), nil
}

func (md *Model) ready(ctx context.Context) error {
	if !md.fitted {
		return errors.New("mlp: model is not fitted")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("mlp: %w", err)
	}
	return nil
}

// activations holds the batched forward pass: acts[l] is the input of layer
// l (acts[0] the data, acts[l] for l >= 1 the ReLU activations of hidden
// layer l), out the network's raw output (the logit for binary).
type activations struct {
	acts []blas64.General
	out  []float64
}

func newActivations(layers []layer, rows int) *activations {
	a := &activations{acts: make([]blas64.General, len(layers))}
	for l := 1; l < len(layers); l++ {
		a.acts[l] = newGeneral(rows, layers[l].in)
	}
	a.out = make([]float64, rows)
	return a
}

// forward runs the network with parameters theta on the rows of x, writing
// into a (sized for at least x.Rows rows), and returns the raw outputs.
func forward(layers []layer, theta []float64, x blas64.General, a *activations) []float64 {
	n := x.Rows
	a.acts[0] = x
	for l, ly := range layers {
		var z blas64.General
		if l+1 < len(layers) {
			z = rowsOf(a.acts[l+1], n)
		} else {
			z = blas64.General{Rows: n, Cols: 1, Stride: 1, Data: a.out[:n]}
		}
		b := ly.bias(theta)
		for i := 0; i < n; i++ {
			copy(z.Data[i*z.Stride:i*z.Stride+ly.out], b)
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, rowsOf(a.acts[l], n), ly.weights(theta), 1, z)
		if l+1 < len(layers) {
			relu(z)
		}
	}
	return a.out[:n]
}

func relu(z blas64.General) {
	for i := 0; i < z.Rows; i++ {
		row := z.Data[i*z.Stride : i*z.Stride+z.Cols]
		for j, v := range row {
			if v < 0 {
				row[j] = 0
			}
		}
	}
}

// backward propagates the per-sample output signals dout (length n) through
// the network whose forward pass is in a, writing the signal at each layer's
// output (before the ReLU, i.e. d out / d z_l per sample, times dout) into
// deltas[l] (n x layers[l].out). If grad is not nil, it also accumulates
// into it (with the layout of theta) the parameter gradient summed over the
// samples: dW_l = delta_l^T A_l, db_l = delta_l^T 1.
func backward(layers []layer, theta []float64, a *activations, dout []float64, deltas []blas64.General, grad []float64) {
	n := len(dout)
	last := len(layers) - 1
	deltas[last] = blas64.General{Rows: n, Cols: 1, Stride: 1, Data: dout}
	for l := last; l >= 0; l-- {
		ly := layers[l]
		d := rowsOf(deltas[l], n)
		if grad != nil {
			gw := ly.weights(grad)
			blas64.Gemm(blas.Trans, blas.NoTrans, 1, d, rowsOf(a.acts[l], n), 1, gw)
			colSums(ly.bias(grad), d)
		}
		if l == 0 {
			break
		}
		prev := rowsOf(deltas[l-1], n)
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, d, ly.weights(theta), 0, prev)
		// ReLU mask: relu(z) > 0 exactly when z > 0.
		act := a.acts[l]
		for i := 0; i < n; i++ {
			ar := act.Data[i*act.Stride : i*act.Stride+act.Cols]
			pr := prev.Data[i*prev.Stride : i*prev.Stride+prev.Cols]
			for j, v := range ar {
				if v <= 0 {
					pr[j] = 0
				}
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

// colSums adds the column sums of d to dst.
func colSums(dst []float64, d blas64.General) {
	for i := 0; i < d.Rows; i++ {
		row := d.Data[i*d.Stride : i*d.Stride+d.Cols]
		for j, v := range row {
			dst[j] += v
		}
	}
}

func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// link maps raw outputs to predictions in place and, if scale is not nil,
// writes d prediction / d raw output into it.
func (md *Model) link(out, scale []float64) {
	switch md.task {
	case framework.Binary:
		for i, z := range out {
			p := sigmoid(z)
			out[i] = p
			if scale != nil {
				scale[i] = p * (1 - p)
			}
		}
	default:
		for i, z := range out {
			out[i] = md.mu + md.sd*z
			if scale != nil {
				scale[i] = md.sd
			}
		}
	}
}

// predict returns the predictions with parameters theta.
func (md *Model) predict(theta []float64, x blas64.General) *mat.Dense {
	a := newActivations(md.layers, x.Rows)
	out := forward(md.layers, theta, x, a)
	md.link(out, nil)
	return mat.NewDense(x.Rows, 1, out)
}

// Predict returns the n x 1 predictions: the mean mu + sd*net(x) for
// regression, sigmoid(net(x)) = P(Y = 1) for binary.
func (md *Model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	return md.predict(md.theta, xg), nil
}

// PredictShifted returns the predictions at theta + dtheta; theta is left
// unchanged.
func (md *Model) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	if len(dtheta) != md.m {
		return nil, fmt.Errorf("mlp: PredictShifted: len(dtheta) = %d, want NumParams() = %d", len(dtheta), md.m)
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	shifted := make([]float64, md.m)
	for i, t := range md.theta {
		shifted[i] = t + dtheta[i]
	}
	return md.predict(shifted, xg), nil
}

// signals runs the forward pass at the fitted parameters and backpropagates
// d prediction / d raw output, so that the per-sample gradient of the
// prediction w.r.t. layer l's weights is the outer product of row i of
// deltas[l] and row i of a.acts[l].
func (md *Model) signals(x blas64.General) (*activations, []blas64.General) {
	n := x.Rows
	a := newActivations(md.layers, n)
	out := forward(md.layers, md.theta, x, a)
	scale := make([]float64, n)
	md.link(append([]float64(nil), out...), scale)
	deltas := newDeltas(md.layers, n)
	backward(md.layers, md.theta, a, scale, deltas, nil)
	return a, deltas
}
