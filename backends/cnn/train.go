package cnn

import (
	"context"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

const pcgStream = 0x636e6e2d6c617a79 // "cnn-lazy"

// Fit trains the network on the rows of x with responses y (see the package
// documentation). Fit may be called once.
func (md *Model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	xg, target, err := md.head.FitArgs(md.trained.Fitted, x, md.inputs, y)
	if err != nil {
		return err
	}
	sp := nn.SplitValid(xg, target, md.cfg.train.Valid, md.seed)
	rng := nn.NewRNG(md.seed, pcgStream)
	theta := md.initParams(rng)
	tr := md.newTrainer(sp.X, sp.Target, theta)
	mx, mt := sp.Monitored()
	res, err := tr.Fit(ctx, rng, md.cfg.train, func() float64 { return md.fullLoss(theta, mx, mt) })
	if err := md.trained.Finish(res, err, tr, sp.ValidX.Rows); err != nil {
		return err
	}
	md.memo.Clear()
	return nil
}

// WarmStart implements framework.WarmStarter: a new model starting at this
// model's parameters (keeping its response scaling) after steps Adam steps
// (minibatches reshuffled every pass by a generator seeded with seed) on
// the rows of x; steps <= 0 is one epoch. The learning rate follows
// nn.WarmRate (a linear rise to 4 times the lr option over the first
// quarter of the steps, then a linear fall to zero), and Adam resumes from
// the second-moment estimates Fit ended with (nn.Adam.Resumed): a fresh
// state's first steps move every parameter by about the learning rate.
// Both let lazy-es's few default steps come close to retraining (see
// docs/defaults.md). The last parameters are kept.
func (md *Model) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	xg, target, err := md.head.WarmArgs(ctx, md.trained.Fitted, x, md.inputs, y)
	if err != nil {
		return nil, err
	}
	nm := *md
	nm.trained = nn.Trained{}
	nm.memo = new(nn.Memo[*passes])
	theta := append([]float64(nil), md.trained.Theta...)
	tr := nm.newTrainer(xg, target, theta)
	if md.trained.Adam != nil {
		tr.Resume(md.trained.Adam)
	}
	if err := tr.Continue(ctx, nn.NewRNG(seed, nn.WarmStream(pcgStream)), steps); err != nil {
		return nil, err
	}
	// The new model carries the full model's optimizer state.
	nm.trained = nn.Trained{Theta: theta, Fitted: true, Adam: md.trained.Adam}
	return &nm, nil
}

// WarmStartStopped implements framework.WarmStopper: a new model starting
// at this model's parameters (keeping its response scaling) that trains as
// Fit trains (Adam at the lr option, resuming from the second moments Fit
// ended with; minibatches reshuffled every pass by a generator seeded with
// seed) on the rows of x less the validation slice Fit holds out of as many
// rows, for at most maxEpochs epochs, stopping on the slice's loss with the
// patience and tol options and keeping the parameters of the best epoch
// (the starting ones if none is better).
func (md *Model) WarmStartStopped(ctx context.Context, x mat.Matrix, y []float64, maxEpochs int, seed int64) (framework.Model, error) {
	xg, target, err := md.head.WarmArgs(ctx, md.trained.Fitted, x, md.inputs, y)
	if err != nil {
		return nil, err
	}
	nm := *md
	nm.trained = nn.Trained{}
	nm.memo = new(nn.Memo[*passes])
	sp := nn.SplitValid(xg, target, md.cfg.train.Valid, md.seed)
	theta := append([]float64(nil), md.trained.Theta...)
	tr := nm.newTrainer(sp.X, sp.Target, theta)
	if md.trained.Adam != nil {
		tr.Resume(md.trained.Adam)
	}
	mx, mt := sp.Monitored()
	cfg := md.cfg.train
	cfg.Epochs = maxEpochs
	res, err := tr.Fit(ctx, nn.NewRNG(seed, nn.WarmStream(pcgStream)), cfg, func() float64 { return nm.fullLoss(theta, mx, mt) })
	if err := nm.trained.Finish(res, err, tr, sp.ValidX.Rows); err != nil {
		return nil, err
	}
	return &nm, nil
}

// initParams draws PyTorch's default initialisation: uniform on
// ±1/sqrt(fan_in), fan_in = k*k for the convolution.
func (md *Model) initParams(rng *rand.Rand) []float64 {
	theta := make([]float64, md.m)
	nn.InitUniform(rng, theta[md.cw:md.cb+md.f], md.kk)
	for _, l := range md.layers {
		nn.InitUniform(rng, theta[l.w:l.b+l.out], l.in)
	}
	return theta
}

// fullLoss is the mean training loss over all rows of x, in blocks.
func (md *Model) fullLoss(theta []float64, x blas64.General, target []float64) float64 {
	n := x.Rows
	p := md.newPass(min(n, predictBlock))
	var s float64
	for i0 := 0; i0 < n; i0 += predictBlock {
		rows := min(predictBlock, n-i0)
		xb := blas64.General{Rows: rows, Cols: x.Cols, Stride: x.Stride, Data: x.Data[i0*x.Stride:]}
		s += md.head.Loss(md.forward(theta, xb, p), target[i0:i0+rows]) * float64(rows)
	}
	return s / float64(n)
}

// net is the network's minibatch forward and backward pass for nn.Trainer,
// on the parameters theta.
type net struct {
	md    *Model
	theta []float64
	p     *pass
	s     *signals
	dpool []float64
}

func (nt *net) Forward(x blas64.General) []float64 { return nt.md.forward(nt.theta, x, nt.p) }

func (nt *net) Backward(dout, grad []float64) {
	nt.md.backward(nt.theta, nt.p, dout, nt.s, grad, nt.dpool)
}

func (nt *net) Update() {}

// newTrainer returns minibatch Adam on the rows of xg.
func (md *Model) newTrainer(xg blas64.General, target, theta []float64) *nn.Trainer {
	batch := nn.BatchRows(md.cfg.train.Batch, xg.Rows)
	nt := &net{md: md, theta: theta, p: md.newPass(batch), s: md.newSignals(batch), dpool: make([]float64, batch*md.d)}
	return nn.NewTrainer(&md.head, nt, xg, target, theta, batch, md.cfg.train.LR)
}
