package mlp

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

// Adam's constants (PyTorch's defaults); the learning rate is an option.
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

// pcgStream is the second PCG word; the seed is the first.
const pcgStream = 0x6d6c702d6c617a79 // "mlp-lazy"

// Fit trains the network on the rows of x with responses y. See the package
// documentation for the procedure. Fit may be called once.
func (md *Model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if md.fitted {
		return errors.New("mlp: Fit called twice")
	}
	xg, err := md.input(x)
	if err != nil {
		return err
	}
	n := xg.Rows
	if len(y) != n {
		return fmt.Errorf("mlp: Fit: %d rows but %d responses", n, len(y))
	}
	md.mu, md.sd = 0, 1
	if md.task == framework.Regression {
		var s, ss float64
		for i, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return framework.Usagef("mlp: response is not finite in row %d", i)
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
	afull := newActivations(md.layers, n)

	best := make([]float64, md.m)
	copy(best, theta)
	bestLoss := md.loss(forward(md.layers, tr.ps, xg, afull), target)
	stale := 0
	md.losses = md.losses[:0]
	for epoch := 0; epoch < md.cfg.epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mlp: Fit interrupted after %d epochs: %w", epoch, err)
		}
		tr.run(rng, tr.epochSteps())
		loss := md.loss(forward(md.layers, tr.ps, xg, afull), target)
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

// warmStream is the second PCG word of WarmStart's generator.
const warmStream = pcgStream ^ 0x7761726d // "warm"

// WarmStart implements framework.WarmStarter: a new model that starts at
// this model's fitted parameters (and keeps its response scaling mu, sd)
// and takes steps Adam steps (a fresh optimizer state, the lr option) on
// minibatches of the rows of x, reshuffled every pass with a generator
// seeded by seed; steps <= 0 means one epoch, ceil(n/batch) steps. The new
// model keeps its last parameters: there is no early stopping.
func (md *Model) WarmStart(ctx context.Context, x mat.Matrix, y []float64, steps int, seed int64) (framework.Model, error) {
	if err := md.ready(ctx); err != nil {
		return nil, err
	}
	xg, err := md.input(x)
	if err != nil {
		return nil, err
	}
	if len(y) != xg.Rows {
		return nil, fmt.Errorf("mlp: WarmStart: %d rows but %d responses", xg.Rows, len(y))
	}
	nm := &Model{task: md.task, inputs: md.inputs, seed: md.seed, cfg: md.cfg, outs: md.outs,
		layers: md.layers, m: md.m, mu: md.mu, sd: md.sd}
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
			return nil, fmt.Errorf("mlp: WarmStart interrupted after %d steps: %w", done, err)
		}
		k := min(steps-done, tr.epochSteps())
		tr.run(rng, k)
		done += k
	}
	nm.theta = theta
	nm.fitted = true
	return nm, nil
}

// targets checks the responses and returns the training targets: the
// responses standardised with mu and sd for regression, the labels
// otherwise.
func (md *Model) targets(y []float64) ([]float64, error) {
	target := make([]float64, len(y))
	switch md.task {
	case framework.Binary:
		for i, v := range y {
			if v != 0 && v != 1 {
				return nil, framework.Usagef("mlp: binary response must be 0 or 1, row %d is %v", i, v)
			}
		}
		copy(target, y)
	case framework.Multiclass:
		for i, v := range y {
			if v < 0 || v >= float64(md.outs) || v != math.Trunc(v) {
				return nil, framework.Usagef("mlp: a %d-class response must be a label 0..%d, row %d is %v", md.outs, md.outs-1, i, v)
			}
		}
		copy(target, y)
	default:
		for i, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, framework.Usagef("mlp: response is not finite in row %d", i)
			}
			target[i] = (v - md.mu) / md.sd
		}
	}
	return target, nil
}

// trainer holds the buffers of minibatch Adam on one training set.
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
	ab     *activations
	db     []blas64.General
	opt    *adam
	ps     *params
	gradT  []blas64.General
	perm   []int
	pos    int // next row of perm; 0: reshuffle before the next step
}

func (md *Model) newTrainer(xg blas64.General, target, theta []float64) *trainer {
	n := xg.Rows
	batch := min(md.cfg.batch, n)
	tr := &trainer{md: md, xg: xg, target: target, theta: theta, batch: batch,
		xb: newGeneral(batch, md.inputs), yb: make([]float64, batch),
		dout: make([]float64, batch*md.outs), grad: make([]float64, md.m),
		ab: newActivations(md.layers, batch), db: newDeltas(md.layers, batch),
		opt: newAdam(md.m, md.cfg.lr), ps: newParams(md.layers, theta),
		gradT: make([]blas64.General, len(md.layers)), perm: make([]int, n)}
	for l, ly := range md.layers {
		if ly.transposed() {
			tr.gradT[l] = newGeneral(ly.in, ly.out)
		}
	}
	for i := range tr.perm {
		tr.perm[i] = i
	}
	return tr
}

// epochSteps is the number of minibatches in one pass over the rows.
func (tr *trainer) epochSteps() int { return (tr.xg.Rows + tr.batch - 1) / tr.batch }

// run takes k Adam steps, reshuffling the rows with rng at the start of
// every pass.
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
		out := forward(md.layers, tr.ps, rowsOf(tr.xb, rows), tr.ab)
		md.lossGrad(out, tr.yb[:rows], tr.dout[:rows*md.outs])
		clear(tr.grad)
		backward(md.layers, tr.ps, tr.ab, tr.dout[:rows*md.outs], tr.db, tr.grad, tr.gradT)
		tr.opt.step(tr.theta, tr.grad)
		tr.ps.refresh(md.layers)
	}
}

// initParams draws PyTorch's nn.Linear default initialisation: weights
// Kaiming-uniform with a = sqrt(5) and biases uniform, both on
// (-1/sqrt(in), 1/sqrt(in)).
func (md *Model) initParams(rng *rand.Rand) []float64 {
	theta := make([]float64, md.m)
	for _, l := range md.layers {
		bound := 1 / math.Sqrt(float64(l.in))
		for i := l.w; i < l.b+l.out; i++ {
			theta[i] = bound * (2*rng.Float64() - 1)
		}
	}
	return theta
}

// loss is the mean training loss of raw outputs out: squared error on the
// standardised response for regression, log-loss on the logits for binary,
// softmax cross-entropy for multiclass.
func (md *Model) loss(out, y []float64) float64 {
	var s float64
	if md.task == framework.Multiclass {
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
		return s / float64(len(y))
	}
	if md.task == framework.Binary {
		for i, z := range out {
			// log(1 + e^z) - y z, computed stably.
			s += math.Max(z, 0) - y[i]*z + math.Log1p(math.Exp(-math.Abs(z)))
		}
	} else {
		for i, z := range out {
			r := z - y[i]
			s += r * r
		}
	}
	return s / float64(len(out))
}

// lossGrad writes d loss / d out into dout for the minibatch mean loss.
func (md *Model) lossGrad(out, y, dout []float64) {
	inv := 1 / float64(len(y))
	if md.task == framework.Multiclass {
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
		return
	}
	if md.task == framework.Binary {
		for i, z := range out {
			dout[i] = (sigmoid(z) - y[i]) * inv
		}
		return
	}
	for i, z := range out {
		dout[i] = 2 * (z - y[i]) * inv
	}
}

// adam is PyTorch's Adam without weight decay.
type adam struct {
	lr         float64
	m, v       []float64
	pow1, pow2 float64 // beta1^t, beta2^t
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
	m, v := a.m[:len(theta)], a.v[:len(theta)]
	grad = grad[:len(theta)]
	for i, g := range grad {
		mi := adamBeta1*m[i] + (1-adamBeta1)*g
		vi := adamBeta2*v[i] + (1-adamBeta2)*g*g
		m[i], v[i] = mi, vi
		theta[i] -= stepSize * mi / (math.Sqrt(vi)/sc2 + adamEps)
	}
}
