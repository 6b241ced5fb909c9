package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// Net is h(x) = out(c + sum_k v_k tanh(w_k . x + b_k)), with out the
// identity scaled back to the response's units (regression) or the sigmoid
// (binary). Parameters theta, in this order: W (hidden x p, row-major), b
// (hidden), v (hidden), c.
type Net struct {
	task              framework.Task
	p, hidden, epochs int
	lr                float64
	seed              int64
	theta             []float64
	mu, sd            float64 // regression: h = mu + sd * net
	fitted            bool
}

var _ framework.Gradienter = (*Net)(nil)

func (n *Net) NumParams() int { return n.hidden*n.p + 2*n.hidden + 1 }

// forward returns, for the rows of x at parameters th, the raw output and
// the hidden activations (rows x hidden).
func (n *Net) forward(x mat.Matrix, th []float64) ([]float64, *mat.Dense) {
	r, _ := x.Dims()
	h, p := n.hidden, n.p
	w := mat.NewDense(h, p, th[:h*p])
	b, v, c := th[h*p:h*p+h], th[h*p+h:h*p+2*h], th[h*p+2*h]
	a := mat.NewDense(r, h, nil)
	a.Mul(x, w.T())
	out := make([]float64, r)
	for i := 0; i < r; i++ {
		row := a.RawRowView(i)
		s := c
		for k := range row {
			row[k] = math.Tanh(row[k] + b[k])
			s += v[k] * row[k]
		}
		out[i] = s
	}
	return out, a
}

// link maps raw outputs to predictions and returns the derivative of the
// prediction with respect to the raw output.
func (n *Net) link(raw []float64) (pred, dpred []float64) {
	pred, dpred = make([]float64, len(raw)), make([]float64, len(raw))
	for i, z := range raw {
		if n.task == framework.Binary {
			s := 1 / (1 + math.Exp(-z))
			pred[i], dpred[i] = s, s*(1-s)
		} else {
			pred[i], dpred[i] = n.mu+n.sd*z, n.sd
		}
	}
	return pred, dpred
}

// grads writes into g the gradient of sum_i u_i raw_i with respect to
// theta (backpropagation of the weights u through one hidden layer).
func (n *Net) grads(x mat.Matrix, a *mat.Dense, th, u, g []float64) {
	h, p := n.hidden, n.p
	v := th[h*p+h : h*p+2*h]
	r, _ := x.Dims()
	clear(g)
	for i := 0; i < r; i++ {
		act := a.RawRowView(i)
		for k := 0; k < h; k++ {
			d := u[i] * v[k] * (1 - act[k]*act[k])
			for j := 0; j < p; j++ {
				g[k*p+j] += d * x.At(i, j)
			}
			g[h*p+k] += d
			g[h*p+h+k] += u[i] * act[k]
		}
		g[h*p+2*h] += u[i]
	}
}

// Fit trains by full-batch Adam from a seeded initialisation.
func (n *Net) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if n.fitted {
		return errors.New("tanhnet: Fit called twice")
	}
	r, c := x.Dims()
	if c != n.p || len(y) != r {
		return fmt.Errorf("tanhnet: Fit: %dx%d inputs and %d responses for %d inputs", r, c, len(y), n.p)
	}
	target := append([]float64(nil), y...)
	n.mu, n.sd = 0, 1
	if n.task == framework.Regression {
		var s, ss float64
		for _, v := range y {
			s += v
		}
		n.mu = s / float64(r)
		for _, v := range y {
			ss += (v - n.mu) * (v - n.mu)
		}
		if ss > 0 {
			n.sd = math.Sqrt(ss / float64(r))
		}
		for i := range target {
			target[i] = (y[i] - n.mu) / n.sd
		}
	}
	rng := rand.New(rand.NewPCG(uint64(n.seed), 0x7a4e))
	M := n.NumParams()
	n.theta = make([]float64, M)
	for i := range n.theta[:n.hidden*n.p+n.hidden] {
		n.theta[i] = rng.NormFloat64() / math.Sqrt(float64(n.p))
	}
	for i := n.hidden*n.p + n.hidden; i < M-1; i++ {
		n.theta[i] = rng.NormFloat64() / math.Sqrt(float64(n.hidden))
	}
	g, m1, m2 := make([]float64, M), make([]float64, M), make([]float64, M)
	u := make([]float64, r)
	for t := 1; t <= n.epochs; t++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, a := n.forward(x, n.theta)
		for i, z := range raw {
			if n.task == framework.Binary {
				z = 1 / (1 + math.Exp(-z)) // log-loss gradient: p - y
			}
			u[i] = (z - target[i]) / float64(r)
		}
		n.grads(x, a, n.theta, u, g)
		for k := range g {
			m1[k] = 0.9*m1[k] + 0.1*g[k]
			m2[k] = 0.999*m2[k] + 0.001*g[k]*g[k]
			mh := m1[k] / (1 - math.Pow(0.9, float64(t)))
			vh := m2[k] / (1 - math.Pow(0.999, float64(t)))
			n.theta[k] -= n.lr * mh / (math.Sqrt(vh) + 1e-8)
		}
	}
	n.fitted = true
	return nil
}

func (n *Net) check(x mat.Matrix) error {
	if !n.fitted {
		return errors.New("tanhnet: model is not fitted")
	}
	if _, c := x.Dims(); c != n.p {
		return fmt.Errorf("tanhnet: input has %d columns, model expects %d", c, n.p)
	}
	return nil
}

func (n *Net) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	return n.PredictShifted(ctx, x, make([]float64, n.NumParams()))
}

// PredictShifted predicts at theta + dtheta: what lazy evaluates.
func (n *Net) PredictShifted(ctx context.Context, x mat.Matrix, dtheta []float64) (*mat.Dense, error) {
	if err := n.check(x); err != nil {
		return nil, err
	}
	if len(dtheta) != n.NumParams() {
		return nil, fmt.Errorf("tanhnet: %d parameter shifts for %d parameters", len(dtheta), n.NumParams())
	}
	th := make([]float64, len(dtheta))
	for k := range th {
		th[k] = n.theta[k] + dtheta[k]
	}
	raw, _ := n.forward(x, th)
	pred, _ := n.link(raw)
	return mat.NewDense(len(pred), 1, pred), nil
}

// Jacobian returns the gradients of the predictions, one row per sample.
func (n *Net) Jacobian(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	if err := n.check(x); err != nil {
		return nil, err
	}
	xd, ok := x.(*mat.Dense)
	if !ok {
		xd = mat.DenseCopyOf(x)
	}
	r, _ := xd.Dims()
	raw, a := n.forward(xd, n.theta)
	_, dpred := n.link(raw)
	M := n.NumParams()
	jac := mat.NewDense(r, M, nil)
	for i := 0; i < r; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n.grads(xd.Slice(i, i+1, 0, n.p), rowOf(a, i), n.theta, dpred[i:i+1], jac.RawRowView(i))
	}
	return jac, nil
}

func rowOf(a *mat.Dense, i int) *mat.Dense {
	_, c := a.Dims()
	return a.Slice(i, i+1, 0, c).(*mat.Dense)
}
