package nn

import "math"

// Adam's constants (PyTorch's defaults); the learning rate is an option.
const (
	AdamBeta1 = 0.9
	AdamBeta2 = 0.999
	AdamEps   = 1e-8
)

// Adam is PyTorch's Adam without weight decay.
type Adam struct {
	lr         float64
	m, v       []float64
	pow1, pow2 float64 // beta1^t, beta2^t
}

// NewAdam returns a fresh optimizer state for n parameters.
func NewAdam(n int, lr float64) *Adam {
	return &Adam{lr: lr, m: make([]float64, n), v: make([]float64, n), pow1: 1, pow2: 1}
}

// Step takes one Adam step on theta with gradient grad.
func (a *Adam) Step(theta, grad []float64) {
	a.pow1 *= AdamBeta1
	a.pow2 *= AdamBeta2
	c1 := 1 - a.pow1
	sc2 := math.Sqrt(1 - a.pow2)
	stepSize := a.lr / c1
	m, v := a.m[:len(theta)], a.v[:len(theta)]
	grad = grad[:len(theta)]
	for i, g := range grad {
		mi := AdamBeta1*m[i] + (1-AdamBeta1)*g
		vi := AdamBeta2*v[i] + (1-AdamBeta2)*g*g
		m[i], v[i] = mi, vi
		theta[i] -= stepSize * mi / (math.Sqrt(vi)/sc2 + AdamEps)
	}
}

// Resumed returns a new optimizer state for going on from a's: the
// second-moment estimates v (and their bias correction) kept, so that the
// first steps are scaled by the gradient magnitudes a has seen, and the
// first moments reset (a different objective's momentum would carry the
// old direction on). a is unchanged.
func (a *Adam) Resumed() *Adam {
	return &Adam{lr: a.lr, m: make([]float64, len(a.m)), v: append([]float64(nil), a.v...), pow1: 1, pow2: a.pow2}
}
