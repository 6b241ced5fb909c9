package nn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/lazyvi/lazyvi/framework/pause"
)

// NewRNG returns the PCG generator of a backend's training: seed is the
// first word, the backend's stream constant the second.
func NewRNG(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// WarmStream derives a backend's WarmStart stream from its Fit stream.
func WarmStream(stream uint64) uint64 { return stream ^ 0x7761726d } // "warm"

// InitUniform fills theta with draws uniform on ±1/sqrt(fanIn), PyTorch's
// default initialisation of a layer's weights and biases, in order.
func InitUniform(rng *rand.Rand, theta []float64, fanIn int) {
	bound := 1 / math.Sqrt(float64(fanIn))
	for i := range theta {
		theta[i] = bound * (2*rng.Float64() - 1)
	}
}

// Net is the architecture a Trainer trains: a forward pass and its
// backpropagation on minibatches of up to the trainer's batch rows, on
// buffers and parameters (the trainer's theta) that the Net holds.
type Net interface {
	// Forward returns the raw outputs (x.Rows x Outs, row-major) on x.
	Forward(x blas64.General) []float64
	// Backward adds to grad (laid out as theta) the gradient of
	// sum(dout . out) for the outputs of the last Forward.
	Backward(dout, grad []float64)
	// Update is called after every change of theta.
	Update()
}

// Trainer runs minibatch Adam on one training set: the rows of x with
// targets target (see Head.Targets), parameters theta updated in place.
type Trainer struct {
	head   *Head
	net    Net
	x      blas64.General
	target []float64
	theta  []float64
	batch  int
	xb     blas64.General
	yb     []float64
	dout   []float64
	grad   []float64
	opt    *Adam
	perm   []int
	pos    int // next row of perm; 0: reshuffle before the next step
}

// BatchRows is the minibatch size for n training rows: batch capped at n.
func BatchRows(batch, n int) int { return min(batch, n) }

// NewTrainer returns a trainer with a fresh Adam state of learning rate lr
// and minibatches of batch rows (BatchRows: net's buffers must hold them).
func NewTrainer(head *Head, net Net, x blas64.General, target, theta []float64, batch int, lr float64) *Trainer {
	n := x.Rows
	tr := &Trainer{head: head, net: net, x: x, target: target, theta: theta, batch: batch,
		xb: blas64.General{Rows: batch, Cols: x.Cols, Stride: x.Cols, Data: make([]float64, batch*x.Cols)},
		yb: make([]float64, batch), dout: make([]float64, batch*head.Outs), grad: make([]float64, len(theta)),
		opt: NewAdam(len(theta), lr), perm: make([]int, n)}
	for i := range tr.perm {
		tr.perm[i] = i
	}
	return tr
}

// Optimizer returns the trainer's Adam state.
func (tr *Trainer) Optimizer() *Adam { return tr.opt }

// Resume makes the trainer go on from the optimizer state a (see
// Adam.Resumed), which must be for as many parameters.
func (tr *Trainer) Resume(a *Adam) { tr.opt = a.Resumed() }

// EpochSteps is the number of minibatches in one pass over the rows.
func (tr *Trainer) EpochSteps() int { return (tr.x.Rows + tr.batch - 1) / tr.batch }

// runCheckEvery is how many Adam steps Run takes between looks at its
// context (pause.Point): an interrupt stops a long epoch (many rows, a
// convolutional network), and a scheduler's pause takes its core, within
// a few minibatches, not at the epoch's end.
const runCheckEvery = 8

// Run takes k Adam steps, reshuffling the rows with rng at the start of
// every pass; it stops early, with ctx's error, when ctx is done, and
// waits where pause.Point says to.
func (tr *Trainer) Run(ctx context.Context, rng *rand.Rand, k int) error {
	n, p, outs := tr.x.Rows, tr.x.Cols, tr.head.Outs
	for t := 0; t < k; t++ {
		if t%runCheckEvery == 0 {
			if err := pause.Point(ctx); err != nil {
				return err
			}
		}
		if tr.pos == 0 {
			rng.Shuffle(n, func(i, j int) { tr.perm[i], tr.perm[j] = tr.perm[j], tr.perm[i] })
		}
		rows := min(tr.batch, n-tr.pos)
		for r, i := range tr.perm[tr.pos : tr.pos+rows] {
			copy(tr.xb.Data[r*p:(r+1)*p], tr.x.Data[i*tr.x.Stride:i*tr.x.Stride+p])
			tr.yb[r] = tr.target[i]
		}
		if tr.pos += rows; tr.pos >= n {
			tr.pos = 0
		}
		xb := tr.xb
		xb.Rows = rows
		out := tr.net.Forward(xb)
		tr.head.LossGrad(out, tr.yb[:rows], tr.dout[:rows*outs])
		clear(tr.grad)
		tr.net.Backward(tr.dout[:rows*outs], tr.grad)
		tr.opt.Step(tr.theta, tr.grad)
		tr.net.Update()
	}
	return nil
}

// Why Fit ended training (FitResult.StoppedBy).
const (
	// StoppedByPatience: the monitored loss stopped improving (or was NaN).
	StoppedByPatience = "patience"
	// StoppedByCap: Fit ran cfg.Epochs epochs.
	StoppedByCap = "cap"
)

// FitResult is what Trainer.Fit returns.
type FitResult struct {
	Best      []float64 // the parameters of the epoch with the lowest monitored loss
	BestLoss  float64   // that loss (at the initial parameters when no epoch improved it)
	Losses    []float64 // the monitored loss after every epoch run
	StoppedBy string    // StoppedByPatience or StoppedByCap
}

// Fit trains for at most cfg.Epochs epochs, computing the monitored loss
// (the validation loss, or the full training loss without a validation
// slice: see Split) after each. It stops when that loss has not fallen
// below (1 - cfg.Tol) times the best loss so far for cfg.Patience
// consecutive epochs, or is NaN, and returns the parameters of the epoch
// with the lowest loss (or the initial ones) and the loss after every epoch
// run, the latter also with the error when ctx ends training.
func (tr *Trainer) Fit(ctx context.Context, rng *rand.Rand, cfg Training, loss func() float64) (FitResult, error) {
	res := FitResult{Best: append([]float64(nil), tr.theta...), BestLoss: loss(), StoppedBy: StoppedByCap}
	stale := 0
	for epoch := 0; epoch < cfg.Epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return FitResult{Losses: res.Losses}, fmt.Errorf("%s: Fit interrupted after %d epochs: %w", tr.head.Name, epoch, err)
		}
		if err := tr.Run(ctx, rng, tr.EpochSteps()); err != nil {
			return FitResult{Losses: res.Losses}, fmt.Errorf("%s: Fit interrupted after %d epochs: %w", tr.head.Name, epoch, err)
		}
		l := loss()
		res.Losses = append(res.Losses, l)
		if math.IsNaN(l) {
			res.StoppedBy = StoppedByPatience
			break
		}
		if l < res.BestLoss*(1-cfg.Tol) {
			stale = 0
		} else {
			stale++
		}
		if l < res.BestLoss {
			res.BestLoss = l
			copy(res.Best, tr.theta)
		}
		if stale >= cfg.Patience {
			res.StoppedBy = StoppedByPatience
			break
		}
	}
	return res, nil
}

// Continue takes steps Adam steps (steps <= 0: one epoch) in passes
// reshuffled with rng, for WarmStart, at the learning rates of WarmRate
// times the trainer's (which it keeps).
func (tr *Trainer) Continue(ctx context.Context, rng *rand.Rand, steps int) error {
	if steps <= 0 {
		steps = tr.EpochSteps()
	}
	lr := tr.opt.lr
	defer func() { tr.opt.lr = lr }()
	for t := 0; t < steps; t++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: WarmStart interrupted after %d steps: %w", tr.head.Name, t, err)
		}
		tr.opt.lr = lr * WarmRate(t, steps)
		if err := tr.Run(ctx, rng, 1); err != nil {
			return fmt.Errorf("%s: WarmStart interrupted after %d steps: %w", tr.head.Name, t, err)
		}
	}
	return nil
}
