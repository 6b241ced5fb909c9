package measures

import (
	"fmt"
	"math"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

func init() {
	framework.RegisterMeasure(MSE())
	framework.RegisterMeasure(R2())
	framework.RegisterMeasure(Accuracy())
	framework.RegisterMeasure(LogLoss())
}

// ProbEps is how far logloss clips probabilities from 0 and 1.
const ProbEps = 1e-15

// MSE returns the measure "mse": Value = -mean((y_i - f_i)^2), Influence_i =
// MSE - (y_i - f_i)^2. Regression only.
func MSE() framework.Measure { return mse{} }

// R2 returns the measure "r2": Value = 1 - MSE/Var(y), with Var(y) =
// mean((y_i - ybar)^2) (divisor n), and the delta-method influence function
//
//	IF_i = -[(r_i^2 - MSE)/Var - MSE((y_i - ybar)^2 - Var)/Var^2],
//
// r_i = y_i - f_i. Regression only; a constant response is an error.
func R2() framework.Measure { return r2{} }

// Accuracy returns the measure "accuracy": the fraction of samples whose
// predicted class equals the response; Influence_i = correct_i - accuracy.
// Binary (n x 1 predictions P(Y = 1)): the predicted class is 1 when
// P(Y = 1) > 0.5 and 0 otherwise (a tie goes to 0). Multiclass (n x K class
// probabilities, labels 0..K-1): the class of the largest probability (a tie
// goes to the lowest label).
func Accuracy() framework.Measure { return accuracy{} }

// LogLoss returns the measure "logloss": Value = -mean(l_i) with
// l_i = -[y_i log p_i + (1 - y_i) log(1 - p_i)] for binary and
// l_i = -log p_{i,y_i} for multiclass (n x K class probabilities), the
// probabilities clipped to [ProbEps, 1 - ProbEps]; Influence_i = mean(l) - l_i.
func LogLoss() framework.Measure { return logloss{} }

type mse struct{}

func (mse) Name() string                   { return "mse" }
func (mse) Supports(t framework.Task) bool { return t == framework.Regression }
func (mse) IsLoss() bool                   { return true }

func (m mse) Evaluate(y []float64, pred mat.Matrix) (framework.Score, error) {
	f, err := column(m.Name(), y, pred)
	if err != nil {
		return framework.Score{}, err
	}
	loss := make([]float64, len(y))
	for i := range y {
		r := y[i] - f[i]
		loss[i] = r * r
	}
	return lossScore(loss), nil
}

// SignalVariance is 4 mean((y_i - f_i)^2): the variance of a row's
// paired difference grows by 4 sigma^2 per unit of VI
// (framework.SignalVariance).
func (m mse) SignalVariance(y []float64, pred mat.Matrix) (float64, error) {
	f, err := column(m.Name(), y, pred)
	if err != nil {
		return 0, err
	}
	s := 0.0
	for i := range y {
		r := y[i] - f[i]
		s += r * r
	}
	return 4 * s / float64(len(y)), nil
}

type r2 struct{}

func (r2) Name() string                   { return "r2" }
func (r2) Supports(t framework.Task) bool { return t == framework.Regression }

func (m r2) Evaluate(y []float64, pred mat.Matrix) (framework.Score, error) {
	f, err := column(m.Name(), y, pred)
	if err != nil {
		return framework.Score{}, err
	}
	n := float64(len(y))
	var ybar float64
	for _, v := range y {
		ybar += v
	}
	ybar /= n
	sq := make([]float64, len(y))  // (y_i - ybar)^2
	res := make([]float64, len(y)) // r_i^2
	var mse, vr float64
	for i := range y {
		d := y[i] - ybar
		sq[i] = d * d
		vr += sq[i]
		r := y[i] - f[i]
		res[i] = r * r
		mse += res[i]
	}
	mse /= n
	vr /= n
	if vr == 0 || math.IsNaN(vr) {
		return framework.Score{}, usageConstant(m.Name(), len(y))
	}
	inf := make([]float64, len(y))
	for i := range y {
		inf[i] = -((res[i]-mse)/vr - mse*(sq[i]-vr)/(vr*vr))
	}
	return framework.Score{Value: 1 - mse/vr, Influence: inf}, nil
}

// SignalVariance is 4 MSE/Var(y): mse's growth, 4 MSE per unit of mse's
// VI, in R²'s units, where a VI is mse's over Var(y) and a variance mse's
// over Var(y)^2 (framework.SignalVariance).
func (m r2) SignalVariance(y []float64, pred mat.Matrix) (float64, error) {
	g, err := mse{}.SignalVariance(y, pred)
	if err != nil {
		return 0, fmt.Errorf("measure %s: %w", m.Name(), err)
	}
	vr, err := responseVariance(m.Name(), y)
	if err != nil {
		return 0, err
	}
	return g / vr, nil
}

// responseVariance is the variance of y with divisor n, r2's denominator;
// a constant response is an error.
func responseVariance(name string, y []float64) (float64, error) {
	ybar := mean(y)
	vr := 0.0
	for _, v := range y {
		vr += (v - ybar) * (v - ybar)
	}
	vr /= float64(len(y))
	if vr == 0 || math.IsNaN(vr) {
		return 0, usageConstant(name, len(y))
	}
	return vr, nil
}

type accuracy struct{}

func (accuracy) Name() string { return "accuracy" }
func (accuracy) Supports(t framework.Task) bool {
	return t == framework.Binary || t == framework.Multiclass
}

func (m accuracy) Evaluate(y []float64, pred mat.Matrix) (framework.Score, error) {
	if isMulti(pred) {
		p, err := classProbs(m.Name(), y, pred)
		if err != nil {
			return framework.Score{}, err
		}
		gain := make([]float64, len(y))
		for i, row := range p {
			best := 0
			for k, v := range row {
				if v > row[best] {
					best = k
				}
			}
			if float64(best) == y[i] {
				gain[i] = 1
			}
		}
		return gainScore(gain), nil
	}
	p, err := probs(m.Name(), y, pred)
	if err != nil {
		return framework.Score{}, err
	}
	gain := make([]float64, len(y))
	for i := range y {
		var class float64
		if p[i] > 0.5 {
			class = 1
		}
		if class == y[i] {
			gain[i] = 1
		}
	}
	return gainScore(gain), nil
}

type logloss struct{}

func (logloss) Name() string { return "logloss" }
func (logloss) IsLoss() bool { return true }
func (logloss) Supports(t framework.Task) bool {
	return t == framework.Binary || t == framework.Multiclass
}

func (m logloss) Evaluate(y []float64, pred mat.Matrix) (framework.Score, error) {
	if isMulti(pred) {
		p, err := classProbs(m.Name(), y, pred)
		if err != nil {
			return framework.Score{}, err
		}
		loss := make([]float64, len(y))
		for i, row := range p {
			loss[i] = -math.Log(min(max(row[int(y[i])], ProbEps), 1-ProbEps))
		}
		return lossScore(loss), nil
	}
	p, err := probs(m.Name(), y, pred)
	if err != nil {
		return framework.Score{}, err
	}
	loss := make([]float64, len(y))
	for i := range y {
		q := min(max(p[i], ProbEps), 1-ProbEps)
		if y[i] == 1 {
			loss[i] = -math.Log(q)
		} else {
			loss[i] = -math.Log1p(-q)
		}
	}
	return lossScore(loss), nil
}

// usageConstant is r2's error for a constant response of n samples.
func usageConstant(name string, n int) error {
	return framework.Usagef("measure %s: the response is constant (variance 0) on the %d samples; r2 is undefined", name, n)
}

// lossScore is the Score of Value = -mean(loss).
func lossScore(loss []float64) framework.Score {
	m := mean(loss)
	inf := make([]float64, len(loss))
	for i, l := range loss {
		inf[i] = m - l
	}
	return framework.Score{Value: -m, Influence: inf}
}

// gainScore is the Score of Value = mean(gain).
func gainScore(gain []float64) framework.Score {
	m := mean(gain)
	inf := make([]float64, len(gain))
	for i, g := range gain {
		inf[i] = g - m
	}
	return framework.Score{Value: m, Influence: inf}
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// column checks that pred is len(y) x 1 with finite entries, that y is
// finite and non-empty, and returns pred's column.
func column(name string, y []float64, pred mat.Matrix) ([]float64, error) {
	if pred == nil {
		return nil, fmt.Errorf("measure %s: nil predictions", name)
	}
	r, c := pred.Dims()
	if c != 1 {
		return nil, fmt.Errorf("measure %s: predictions are %d x %d, want %d x 1", name, r, c, len(y))
	}
	if r != len(y) {
		return nil, fmt.Errorf("measure %s: %d predictions for %d responses", name, r, len(y))
	}
	if len(y) == 0 {
		return nil, fmt.Errorf("measure %s: no samples", name)
	}
	f := make([]float64, r)
	for i := range f {
		f[i] = pred.At(i, 0)
		if math.IsNaN(f[i]) || math.IsInf(f[i], 0) {
			return nil, fmt.Errorf("measure %s: prediction %d is %v", name, i, f[i])
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, framework.Usagef("measure %s: response %d is %v", name, i, y[i])
		}
	}
	return f, nil
}

// probs is column for the binary measures: predictions must be probabilities
// and responses 0 or 1.
func probs(name string, y []float64, pred mat.Matrix) ([]float64, error) {
	p, err := column(name, y, pred)
	if err != nil {
		return nil, err
	}
	for i := range p {
		if p[i] < 0 || p[i] > 1 {
			return nil, fmt.Errorf("measure %s: prediction %d is %v, not a probability in [0, 1]", name, i, p[i])
		}
		if y[i] != 0 && y[i] != 1 {
			return nil, framework.Usagef("measure %s: response %d is %v; a binary response must be 0 or 1", name, i, y[i])
		}
	}
	return p, nil
}

// isMulti reports whether pred holds K >= 2 class probabilities per row.
func isMulti(pred mat.Matrix) bool {
	if pred == nil {
		return false
	}
	_, c := pred.Dims()
	return c >= 2
}

// classProbs checks multiclass predictions (len(y) x K, finite, each entry a
// probability in [0, 1]) and labels (integers 0..K-1), and returns the rows.
func classProbs(name string, y []float64, pred mat.Matrix) ([][]float64, error) {
	r, k := pred.Dims()
	if r != len(y) {
		return nil, fmt.Errorf("measure %s: %d predictions for %d responses", name, r, len(y))
	}
	if len(y) == 0 {
		return nil, fmt.Errorf("measure %s: no samples", name)
	}
	out := make([][]float64, r)
	for i := range out {
		if y[i] < 0 || y[i] >= float64(k) || y[i] != math.Trunc(y[i]) {
			return nil, framework.Usagef("measure %s: response %d is %v; a %d-class response must be a label 0..%d", name, i, y[i], k, k-1)
		}
		row := make([]float64, k)
		for c := range row {
			v := pred.At(i, c)
			if math.IsNaN(v) || v < 0 || v > 1 {
				return nil, fmt.Errorf("measure %s: prediction %d, class %d is %v, not a probability in [0, 1]", name, i, c, v)
			}
			row[c] = v
		}
		out[i] = row
	}
	return out, nil
}
