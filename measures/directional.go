package measures

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// The measures' derivatives along a path between two models' predictions
// (framework.Directional), each row's: the terms the covariance test
// averages (inference.TestCovariance).

// Directional is 2 (y_i - a_i)(b_i - a_i): the derivative of -(y_i - p)^2
// along the line from a to b.
func (m mse) Directional(y []float64, at, toward mat.Matrix) ([]float64, error) {
	a, b, err := twoColumns(m.Name(), y, at, toward)
	if err != nil {
		return nil, err
	}
	d := make([]float64, len(y))
	for i := range d {
		d[i] = 2 * (y[i] - a[i]) * (b[i] - a[i])
	}
	return d, nil
}

// Directional is mse's over the response's variance (its divisor n), the
// derivative of 1 - mse/Var(y).
func (m r2) Directional(y []float64, at, toward mat.Matrix) ([]float64, error) {
	d, err := mse{}.Directional(y, at, toward)
	if err != nil {
		return nil, fmt.Errorf("measure %s: %w", m.Name(), err)
	}
	vr, err := responseVariance(m.Name(), y)
	if err != nil {
		return nil, err
	}
	for i := range d {
		d[i] /= vr
	}
	return d, nil
}

// Directional is the derivative of a row's log-likelihood along the line
// from a's probabilities to b's (clipped as Evaluate clips them):
// (y_i - a_i)(b_i - a_i)/(a_i (1 - a_i)) for a binary response, and
// (b_iy - a_iy)/a_iy for K classes, y the row's class.
func (m logloss) Directional(y []float64, at, toward mat.Matrix) ([]float64, error) {
	d := make([]float64, len(y))
	if isMulti(at) {
		a, err := classProbs(m.Name(), y, at)
		if err != nil {
			return nil, err
		}
		b, err := classProbs(m.Name(), y, toward)
		if err != nil {
			return nil, err
		}
		if len(b) > 0 && len(b[0]) != len(a[0]) {
			return nil, fmt.Errorf("measure %s: predictions of %d and %d classes", m.Name(), len(a[0]), len(b[0]))
		}
		for i, row := range a {
			c := int(y[i])
			d[i] = (clip(b[i][c]) - clip(row[c])) / clip(row[c])
		}
		return d, nil
	}
	a, err := probs(m.Name(), y, at)
	if err != nil {
		return nil, err
	}
	b, err := probs(m.Name(), y, toward)
	if err != nil {
		return nil, err
	}
	for i := range d {
		p := clip(a[i])
		d[i] = (y[i] - p) * (clip(b[i]) - p) / (p * (1 - p))
	}
	return d, nil
}

// twoColumns is column for two models' predictions of y.
func twoColumns(name string, y []float64, at, toward mat.Matrix) (a, b []float64, err error) {
	if a, err = column(name, y, at); err != nil {
		return nil, nil, err
	}
	if b, err = column(name, y, toward); err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

func clip(p float64) float64 { return min(max(p, ProbEps), 1-ProbEps) }
