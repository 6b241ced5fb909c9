package mlp

import (
	"context"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

// pcgStream is the second PCG word; the seed is the first.
const pcgStream = 0x6d6c702d6c617a79 // "mlp-lazy"

// Fit trains the network on the rows of x with responses y. See the package
// documentation for the procedure. Fit may be called once.
func (md *Model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	xg, target, err := md.head.FitArgs(md.trained.Fitted, x, md.inputs, y)
	if err != nil {
		return err
	}
	sp := nn.SplitValid(xg, target, md.cfg.train.Valid, md.seed)
	n := sp.X.Rows

	rng := nn.NewRNG(md.seed, pcgStream)
	theta := md.initParams(rng)
	net := md.newNet(nn.BatchRows(md.cfg.train.Batch, n), theta)
	tr := nn.NewTrainer(&md.head, net, sp.X, sp.Target, theta, nn.BatchRows(md.cfg.train.Batch, n), md.cfg.train.LR)
	mx, mt := sp.Monitored()
	amon := newActivations(md.layers, mx.Rows)
	res, err := tr.Fit(ctx, rng, md.cfg.train, func() float64 {
		return md.head.Loss(forward(md.layers, net.ps, mx, amon), mt)
	})
	if err := md.trained.Finish(res, err, tr, sp.ValidX.Rows); err != nil {
		return err
	}
	md.memo.Clear()
	return nil
}

// WarmStart implements framework.WarmStarter: a new model that starts at
// this model's fitted parameters (and keeps its response scaling mu, sd)
// and takes steps Adam steps (at the learning rates of nn.WarmRate: a
// linear rise to 4 times the lr option over the first quarter of the steps,
// then a linear fall to zero; Adam resumes from the second-moment estimates
// Fit ended with, see nn.Adam.Resumed) on minibatches of the rows of x,
// reshuffled every pass with a generator seeded by seed; steps <= 0 means
// one epoch, ceil(n/batch) steps. The new model keeps its last parameters:
// there is no early stopping.
func (md *Model) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	xg, target, err := md.head.WarmArgs(ctx, md.trained.Fitted, x, md.inputs, y)
	if err != nil {
		return nil, err
	}
	nm := &Model{head: md.head, inputs: md.inputs, seed: md.seed, cfg: md.cfg, layers: md.layers, m: md.m}
	theta := append([]float64(nil), md.trained.Theta...)
	batch := nn.BatchRows(md.cfg.train.Batch, xg.Rows)
	tr := nn.NewTrainer(&nm.head, nm.newNet(batch, theta), xg, target, theta, batch, md.cfg.train.LR)
	if md.trained.Adam != nil {
		tr.Resume(md.trained.Adam)
	}
	if err := tr.Continue(ctx, nn.NewRNG(seed, nn.WarmStream(pcgStream)), steps); err != nil {
		return nil, err
	}
	nm.trained = nn.Trained{Theta: theta, Fitted: true}
	return nm, nil
}

// WarmStartStopped implements framework.WarmStopper: a new model that
// starts at this model's fitted parameters (keeping its response scaling)
// and trains as Fit trains (Adam at the lr option, resuming from the
// second moments Fit ended with; minibatches reshuffled every pass with a
// generator seeded by seed) on the rows of x less the validation slice
// Fit holds out of as many rows, for at most maxEpochs epochs, stopping on
// the slice's loss with the patience and tol options and keeping the
// parameters of the best epoch (the starting ones if none is better).
func (md *Model) WarmStartStopped(ctx context.Context, x mat.Matrix, y []float64, maxEpochs int, seed int64) (framework.Model, error) {
	xg, target, err := md.head.WarmArgs(ctx, md.trained.Fitted, x, md.inputs, y)
	if err != nil {
		return nil, err
	}
	nm := &Model{head: md.head, inputs: md.inputs, seed: md.seed, cfg: md.cfg, layers: md.layers, m: md.m}
	sp := nn.SplitValid(xg, target, md.cfg.train.Valid, md.seed)
	theta := append([]float64(nil), md.trained.Theta...)
	batch := nn.BatchRows(md.cfg.train.Batch, sp.X.Rows)
	nt := nm.newNet(batch, theta)
	tr := nn.NewTrainer(&nm.head, nt, sp.X, sp.Target, theta, batch, md.cfg.train.LR)
	if md.trained.Adam != nil {
		tr.Resume(md.trained.Adam)
	}
	mx, mt := sp.Monitored()
	amon := newActivations(md.layers, mx.Rows)
	cfg := md.cfg.train
	cfg.Epochs = maxEpochs
	res, err := tr.Fit(ctx, nn.NewRNG(seed, nn.WarmStream(pcgStream)), cfg, func() float64 {
		return nm.head.Loss(forward(md.layers, nt.ps, mx, amon), mt)
	})
	if err := nm.trained.Finish(res, err, tr, sp.ValidX.Rows); err != nil {
		return nil, err
	}
	return nm, nil
}

// net is the network's minibatch forward and backward pass for nn.Trainer,
// on the parameters theta (and their transposed copies in ps).
type net struct {
	md    *Model
	ps    *params
	ab    *activations
	db    []blas64.General
	gradT []blas64.General
}

func (md *Model) newNet(batch int, theta []float64) *net {
	nt := &net{md: md, ps: newParams(md.layers, theta), ab: newActivations(md.layers, batch),
		db: newDeltas(md.layers, batch), gradT: make([]blas64.General, len(md.layers))}
	for l, ly := range md.layers {
		if ly.transposed() {
			nt.gradT[l] = newGeneral(ly.in, ly.out)
		}
	}
	return nt
}

func (nt *net) Forward(x blas64.General) []float64 {
	return forward(nt.md.layers, nt.ps, rowsOf(x, x.Rows), nt.ab)
}

func (nt *net) Backward(dout, grad []float64) {
	backward(nt.md.layers, nt.ps, nt.ab, dout, nt.db, grad, nt.gradT)
}

func (nt *net) Update() { nt.ps.refresh(nt.md.layers) }

// initParams draws PyTorch's nn.Linear default initialisation: weights
// Kaiming-uniform with a = sqrt(5) and biases uniform, both on
// (-1/sqrt(in), 1/sqrt(in)).
func (md *Model) initParams(rng *rand.Rand) []float64 {
	theta := make([]float64, md.m)
	for _, l := range md.layers {
		nn.InitUniform(rng, theta[l.w:l.b+l.out], l.in)
	}
	return theta
}
