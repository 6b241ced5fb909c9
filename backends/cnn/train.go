package cnn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8

	pcgStream  = 0x636e6e2d6c617a79 // "cnn-lazy"
	warmStream = pcgStream ^ 0x7761726d
)

// Fit trains the network on the rows of x with responses y (see the package
// documentation). Fit may be called once.
func (md *Model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if md.fitted {
		return errors.New("cnn: Fit called twice")
	}
	xg, err := md.input(x)
	if err != nil {
		return err
	}
	n := xg.Rows
	if len(y) != n {
		return fmt.Errorf("cnn: Fit: %d rows but %d responses", n, len(y))
	}
	md.mu, md.sd = 0, 1
	if md.task == framework.Regression {
		var s, ss float64
		for i, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return framework.Usagef("cnn: response is not finite in row %d", i)
			}
			s += v
		}
		md.mu = s / float64(n)
		for _, v := range y {
			ss += (v - md.mu) * (v - md.mu)
		}
		if sd := math.Sqrt(ss / float64(n)); sd > 0 {
			md.sd = sd
		}
	}
	target, err := md.targets(y)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(uint64(md.seed), pcgStream))
	theta := md.initParams(rng)
	tr := md.newTrainer(xg, target, theta)
	best := append([]float64(nil), theta...)
	bestLoss := md.fullLoss(theta, xg, target)
	stale := 0
	md.losses = md.losses[:0]
	for epoch := 0; epoch < md.cfg.epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("cnn: Fit interrupted after %d epochs: %w", epoch, err)
		}
		tr.run(rng, tr.epochSteps())
		loss := md.fullLoss(theta, xg, target)
		md.losses = append(md.losses, loss)
		md.epochs = epoch + 1
		if math.IsNaN(loss) {
			break
		}
		if loss < bestLoss*(1-md.cfg.tol) {
			stale = 0
		} else {
			stale++
		}
		if loss < bestLoss {
			bestLoss = loss
			copy(best, theta)
		}
		if stale >= md.cfg.patience {
			break
		}
	}
	md.theta = best
	md.fitted = true
	return nil
}

// WarmStart implements framework.WarmStarter: a new model starting at this
// model's parameters (keeping its response scaling) after steps Adam steps
// (fresh optimizer state, the lr option, minibatches reshuffled every pass
// by a generator seeded with seed) on the rows of x; steps <= 0 is one
// epoch. The last parameters are kept.
func (md *Model) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	if len(y) != xg.Rows {
		return nil, fmt.Errorf("cnn: WarmStart: %d rows but %d responses", xg.Rows, len(y))
	}
	nm := *md
	nm.losses, nm.epochs, nm.fitted = nil, 0, false
	target, err := nm.targets(y)
	if err != nil {
		return nil, err
	}
	theta := append([]float64(nil), md.theta...)
	tr := nm.newTrainer(xg, target, theta)
	if steps <= 0 {
		steps = tr.epochSteps()
	}
	rng := rand.New(rand.NewPCG(uint64(seed), warmStream))
	for done := 0; done < steps; {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cnn: WarmStart interrupted after %d steps: %w", done, err)
		}
		k := min(steps-done, tr.epochSteps())
		tr.run(rng, k)
		done += k
	}
	nm.theta = theta
	nm.fitted = true
	return &nm, nil
}

// targets checks the responses and returns the training targets.
func (md *Model) targets(y []float64) ([]float64, error) {
	target := make([]float64, len(y))
	switch md.task {
	case framework.Binary:
		for i, v := range y {
			if v != 0 && v != 1 {
				return nil, framework.Usagef("cnn: binary response must be 0 or 1, row %d is %v", i, v)
			}
		}
		copy(target, y)
	case framework.Multiclass:
		for i, v := range y {
			if v < 0 || v >= float64(md.outs) || v != math.Trunc(v) {
				return nil, framework.Usagef("cnn: a %d-class response must be a label 0..%d, row %d is %v", md.outs, md.outs-1, i, v)
			}
		}
		copy(target, y)
	default:
		for i, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, framework.Usagef("cnn: response is not finite in row %d", i)
			}
			target[i] = (v - md.mu) / md.sd
		}
	}
	return target, nil
}

// initParams draws PyTorch's default initialisation: uniform on
// ±1/sqrt(fan_in), fan_in = k*k for the convolution.
func (md *Model) initParams(rng *rand.Rand) []float64 {
	theta := make([]float64, md.m)
	bound := 1 / math.Sqrt(float64(md.kk))
	for i := md.cw; i < md.cb+md.f; i++ {
		theta[i] = bound * (2*rng.Float64() - 1)
	}
	for _, l := range md.layers {
		bound := 1 / math.Sqrt(float64(l.in))
		for i := l.w; i < l.b+l.out; i++ {
			theta[i] = bound * (2*rng.Float64() - 1)
		}
	}
	return theta
}

// fullLoss is the mean training loss over all rows, in blocks.
func (md *Model) fullLoss(theta []float64, x blas64.General, target []float64) float64 {
	n := x.Rows
	p := md.newPass(min(n, predictBlock))
	var s float64
	for i0 := 0; i0 < n; i0 += predictBlock {
		rows := min(predictBlock, n-i0)
		xb := blas64.General{Rows: rows, Cols: x.Cols, Stride: x.Stride, Data: x.Data[i0*x.Stride:]}
		s += md.loss(md.forward(theta, xb, p), target[i0:i0+rows]) * float64(rows)
	}
	return s / float64(n)
}

// loss is the mean loss of raw outputs: squared error on the standardised
// response, log-loss on the logit, or softmax cross-entropy.
func (md *Model) loss(out, y []float64) float64 {
	var s float64
	switch md.task {
	case framework.Multiclass:
		K := md.outs
		for i, lab := range y {
			z := out[i*K : (i+1)*K]
			m := z[0]
			for _, v := range z[1:] {
				m = math.Max(m, v)
			}
			var e float64
			for _, v := range z {
				e += math.Exp(v - m)
			}
			s += m + math.Log(e) - z[int(lab)]
		}
	case framework.Binary:
		for i, z := range out {
			s += math.Max(z, 0) - y[i]*z + math.Log1p(math.Exp(-math.Abs(z)))
		}
	default:
		for i, z := range out {
			r := z - y[i]
			s += r * r
		}
	}
	return s / float64(len(y))
}

// lossGrad writes d loss / d out for the minibatch mean loss.
func (md *Model) lossGrad(out, y, dout []float64) {
	inv := 1 / float64(len(y))
	switch md.task {
	case framework.Multiclass:
		K := md.outs
		copy(dout, out)
		for i, lab := range y {
			d := dout[i*K : (i+1)*K]
			softmax(d)
			d[int(lab)]--
			for k := range d {
				d[k] *= inv
			}
		}
	case framework.Binary:
		for i, z := range out {
			dout[i] = (sigmoid(z) - y[i]) * inv
		}
	default:
		for i, z := range out {
			dout[i] = 2 * (z - y[i]) * inv
		}
	}
}

// trainer runs minibatch Adam on one training set.
type trainer struct {
	md     *Model
	xg     blas64.General
	target []float64
	theta  []float64
	batch  int
	xb     blas64.General
	yb     []float64
	dout   []float64
	grad   []float64
	dpool  []float64
	p      *pass
	s      *signals
	opt    *adam
	perm   []int
	pos    int
}

func (md *Model) newTrainer(xg blas64.General, target, theta []float64) *trainer {
	n := xg.Rows
	batch := min(md.cfg.batch, n)
	tr := &trainer{md: md, xg: xg, target: target, theta: theta, batch: batch,
		xb: blas64.General{Rows: batch, Cols: md.inputs, Stride: md.inputs, Data: make([]float64, batch*md.inputs)},
		yb: make([]float64, batch), dout: make([]float64, batch*md.outs), grad: make([]float64, md.m),
		dpool: make([]float64, batch*md.d), p: md.newPass(batch), s: md.newSignals(batch),
		opt: newAdam(md.m, md.cfg.lr), perm: make([]int, n)}
	for i := range tr.perm {
		tr.perm[i] = i
	}
	return tr
}

func (tr *trainer) epochSteps() int { return (tr.xg.Rows + tr.batch - 1) / tr.batch }

// run takes k Adam steps, reshuffling at the start of every pass.
func (tr *trainer) run(rng *rand.Rand, k int) {
	md, n, p := tr.md, tr.xg.Rows, tr.md.inputs
	for ; k > 0; k-- {
		if tr.pos == 0 {
			rng.Shuffle(n, func(i, j int) { tr.perm[i], tr.perm[j] = tr.perm[j], tr.perm[i] })
		}
		rows := min(tr.batch, n-tr.pos)
		for r, i := range tr.perm[tr.pos : tr.pos+rows] {
			copy(tr.xb.Data[r*p:(r+1)*p], tr.xg.Data[i*tr.xg.Stride:i*tr.xg.Stride+p])
			tr.yb[r] = tr.target[i]
		}
		if tr.pos += rows; tr.pos >= n {
			tr.pos = 0
		}
		xb := tr.xb
		xb.Rows = rows
		out := md.forward(tr.theta, xb, tr.p)
		md.lossGrad(out, tr.yb[:rows], tr.dout[:rows*md.outs])
		clear(tr.grad)
		md.backward(tr.theta, tr.p, tr.dout[:rows*md.outs], tr.s, tr.grad, tr.dpool)
		tr.opt.step(tr.theta, tr.grad)
	}
}

type adam struct {
	lr         float64
	m, v       []float64
	pow1, pow2 float64
}

func newAdam(n int, lr float64) *adam {
	return &adam{lr: lr, m: make([]float64, n), v: make([]float64, n), pow1: 1, pow2: 1}
}

func (a *adam) step(theta, grad []float64) {
	a.pow1 *= adamBeta1
	a.pow2 *= adamBeta2
	c1 := 1 - a.pow1
	sc2 := math.Sqrt(1 - a.pow2)
	stepSize := a.lr / c1
	for i, g := range grad[:len(theta)] {
		mi := adamBeta1*a.m[i] + (1-adamBeta1)*g
		vi := adamBeta2*a.v[i] + (1-adamBeta2)*g*g
		a.m[i], a.v[i] = mi, vi
		theta[i] -= stepSize * mi / (math.Sqrt(vi)/sc2 + adamEps)
	}
}
