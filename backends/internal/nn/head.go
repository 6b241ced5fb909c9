package nn

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"github.com/lazyvi/lazyvi/framework"
)

// Head is a network's output layer as the task sees it: Outs raw outputs
// per sample (K for multiclass, else 1) and, for regression, the response
// scaling Mu, Sd (prediction = Mu + Sd*z). Name prefixes its messages.
type Head struct {
	Name   string
	Task   framework.Task
	Outs   int
	Mu, Sd float64
}

// NewHead checks spec's task, classes and inputs and returns its head, with
// Mu = 0, Sd = 0 until Standardize.
func NewHead(name string, spec framework.ModelSpec) (Head, error) {
	outs := 1
	switch spec.Task {
	case framework.Regression, framework.Binary:
	case framework.Multiclass:
		if spec.Classes < 2 {
			return Head{}, framework.Usagef("%s: multiclass needs at least 2 classes, got %d", name, spec.Classes)
		}
		outs = spec.Classes
	default:
		return Head{}, framework.Usagef("%s: unsupported task %v", name, spec.Task)
	}
	if spec.Inputs < 1 {
		return Head{}, framework.Usagef("%s: model needs at least one input column, got %d", name, spec.Inputs)
	}
	return Head{Name: name, Task: spec.Task, Outs: outs}, nil
}

// RowsPerSample is the number of Jacobian rows per sample: K for
// multiclass, else 1.
func (h *Head) RowsPerSample() int {
	if h.Task == framework.Multiclass {
		return h.Outs
	}
	return 1
}

// Standardize sets Mu and Sd to the mean and population standard deviation
// of the regression responses y (Sd = 1 if they are constant); for the
// other tasks to 0 and 1.
func (h *Head) Standardize(y []float64) error {
	h.Mu, h.Sd = 0, 1
	if h.Task != framework.Regression {
		return nil
	}
	n := len(y)
	var s, ss float64
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return framework.Usagef("%s: response is not finite in row %d", h.Name, i)
		}
		s += v
	}
	h.Mu = s / float64(n)
	for _, v := range y {
		ss += (v - h.Mu) * (v - h.Mu)
	}
	if sd := math.Sqrt(ss / float64(n)); sd > 0 {
		h.Sd = sd
	}
	return nil
}

// Targets checks the responses and returns the training targets: the
// responses standardised with Mu and Sd for regression, the labels
// otherwise.
func (h *Head) Targets(y []float64) ([]float64, error) {
	target := make([]float64, len(y))
	switch h.Task {
	case framework.Binary:
		for i, v := range y {
			if v != 0 && v != 1 {
				return nil, framework.Usagef("%s: binary response must be 0 or 1, row %d is %v", h.Name, i, v)
			}
		}
		copy(target, y)
	case framework.Multiclass:
		for i, v := range y {
			if v < 0 || v >= float64(h.Outs) || v != math.Trunc(v) {
				return nil, framework.Usagef("%s: a %d-class response must be a label 0..%d, row %d is %v", h.Name, h.Outs, h.Outs-1, i, v)
			}
		}
		copy(target, y)
	default:
		for i, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, framework.Usagef("%s: response is not finite in row %d", h.Name, i)
			}
			target[i] = (v - h.Mu) / h.Sd
		}
	}
	return target, nil
}

// Loss is the mean training loss of the raw outputs out (len(y) x Outs,
// row-major) against targets y: squared error on the standardised response
// for regression, log-loss on the logit for binary, softmax cross-entropy
// for multiclass.
func (h *Head) Loss(out, y []float64) float64 {
	var s float64
	switch h.Task {
	case framework.Multiclass:
		K := h.Outs
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
			// log(1 + e^z) - y z, computed stably.
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

// LossGrad writes d Loss / d out into dout.
func (h *Head) LossGrad(out, y, dout []float64) {
	inv := 1 / float64(len(y))
	switch h.Task {
	case framework.Multiclass:
		K := h.Outs
		copy(dout, out)
		for i, lab := range y {
			d := dout[i*K : (i+1)*K]
			Softmax(d)
			d[int(lab)]--
			for k := range d {
				d[k] *= inv
			}
		}
	case framework.Binary:
		for i, z := range out {
			dout[i] = (Sigmoid(z) - y[i]) * inv
		}
	default:
		for i, z := range out {
			dout[i] = 2 * (z - y[i]) * inv
		}
	}
}

// Link maps raw outputs to predictions in place and, if scale is not nil,
// writes d prediction / d raw output into it (not for multiclass, whose
// softmax couples the outputs: see SoftmaxSignals).
func (h *Head) Link(out, scale []float64) {
	switch h.Task {
	case framework.Multiclass:
		for i := 0; i < len(out); i += h.Outs {
			Softmax(out[i : i+h.Outs])
		}
	case framework.Binary:
		for i, z := range out {
			p := Sigmoid(z)
			out[i] = p
			if scale != nil {
				scale[i] = p * (1 - p)
			}
		}
	default:
		for i, z := range out {
			out[i] = h.Mu + h.Sd*z
			if scale != nil {
				scale[i] = h.Sd
			}
		}
	}
}

// SoftmaxSignals returns the output signals that backpropagate the
// gradients of multiclass predictions: out holds the K logits of sample i
// at out[i*stride:] for n samples (stride K: one row per sample; K*K: each
// sample repeated K times, see RepeatRows), and row i*K + k of the result
// (n*K x K, row-major) is the softmax Jacobian's row k for sample i,
// p_k (e_k - p).
func (h *Head) SoftmaxSignals(out []float64, n, stride int) []float64 {
	K := h.Outs
	dout := make([]float64, n*K*K)
	for i := 0; i < n; i++ {
		prob := append([]float64(nil), out[i*stride:i*stride+K]...)
		Softmax(prob)
		for k := 0; k < K; k++ {
			d := dout[(i*K+k)*K : (i*K+k+1)*K]
			for j := range d {
				d[j] = -prob[k] * prob[j]
			}
			d[k] += prob[k]
		}
	}
	return dout
}

// SoftmaxTimes writes S_i w_i = p_i o w_i - p_i (p_i . w_i) into dst for
// each sample i, p_i and w_i its k values in prob and w: the product with
// the softmax's Jacobian S_i = diag(p_i) - p_i p_i^T (symmetric, so both
// Jacobian products of a multiclass network use it).
func SoftmaxTimes(prob, w, dst []float64, k int) {
	for i := 0; i+k <= len(prob); i += k {
		p, wi, di := prob[i:i+k], w[i:i+k], dst[i:i+k]
		s := floats.Dot(p, wi)
		for j := range di {
			di[j] = p[j] * (wi[j] - s)
		}
	}
}

// Sigmoid is 1/(1 + e^-z), computed without overflow.
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// Softmax maps logits to probabilities in place.
func Softmax(z []float64) {
	m := z[0]
	for _, v := range z[1:] {
		m = math.Max(m, v)
	}
	var s float64
	for k, v := range z {
		z[k] = math.Exp(v - m)
		s += z[k]
	}
	for k := range z {
		z[k] /= s
	}
}
