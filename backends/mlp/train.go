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
	target := make([]float64, n)
	md.mu, md.sd = 0, 1
	switch md.task {
	case framework.Binary:
		for i, v := range y {
			if v != 0 && v != 1 {
				return framework.Usagef("mlp: binary response must be 0 or 1, row %d is %v", i, v)
			}
		}
		copy(target, y)
	default:
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
		for i, v := range y {
			target[i] = (v - md.mu) / md.sd
		}
	}

	rng := rand.New(rand.NewPCG(uint64(md.seed), pcgStream))
	theta := md.initParams(rng)

	batch := min(md.cfg.batch, n)
	p := md.inputs
	xb := newGeneral(batch, p)
	yb := make([]float64, batch)
	dout := make([]float64, batch)
	grad := make([]float64, md.m)
	ab := newActivations(md.layers, batch)
	db := newDeltas(md.layers, batch)
	afull := newActivations(md.layers, n)
	opt := newAdam(md.m, md.cfg.lr)
	ps := newParams(md.layers, theta)
	gradT := make([]blas64.General, len(md.layers))
	for l, ly := range md.layers {
		if ly.transposed() {
			gradT[l] = newGeneral(ly.in, ly.out)
		}
	}

	best := make([]float64, md.m)
	copy(best, theta)
	bestLoss := md.loss(forward(md.layers, ps, xg, afull), target)
	stale := 0
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	md.losses = md.losses[:0]
	for epoch := 0; epoch < md.cfg.epochs; epoch++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mlp: Fit interrupted after %d epochs: %w", epoch, err)
		}
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		for start := 0; start < n; start += batch {
			rows := min(batch, n-start)
			for k, i := range perm[start : start+rows] {
				copy(xb.Data[k*p:(k+1)*p], xg.Data[i*xg.Stride:i*xg.Stride+p])
				yb[k] = target[i]
			}
			out := forward(md.layers, ps, rowsOf(xb, rows), ab)
			md.lossGrad(out, yb[:rows], dout[:rows])
			clear(grad)
			backward(md.layers, ps, ab, dout[:rows], db, grad, gradT)
			opt.step(theta, grad)
			ps.refresh(md.layers)
		}
		loss := md.loss(forward(md.layers, ps, xg, afull), target)
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
// standardised response for regression, log-loss on the logits for binary.
func (md *Model) loss(out, y []float64) float64 {
	var s float64
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
	inv := 1 / float64(len(out))
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
