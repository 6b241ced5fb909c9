package inference

import (
	"fmt"
	"math"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// Test says where a result's p-value comes from.
type Test int

const (
	// TestEstimate is the Wald test of the VI estimate itself:
	// 1 - Phi((VI - delta)/se), with the bias bound where the interval
	// has one, so that the interval and the test agree. It is the zero
	// Test.
	TestEstimate Test = iota
	// TestCovariance tests H0: VI = 0 (the response does not depend on the
	// feature given the others) by the covariance between the reduced
	// model's residual and the full model's departure from it, a
	// generalised covariance measure (Shah and Peters 2020; Zheng and
	// Raskutti 2025's GCM-type importance): each row's derivative of its
	// score along the line from the reduced model's predictions g to the
	// full model's f (framework.Directional; for squared error
	// t_i = 2 (y_i - g_i)(f_i - g_i)), T = mean(t), se^2 = var(t)/n plus
	// the repetitions' spread, p = 1 - Phi(T/se), on the same rows and
	// models as the paired estimate (the ensemble's averaged predictions
	// by default).
	//
	// It applies to an estimator whose reduced model is the full model's
	// mean given the other features (framework.ConditionalMean: cpi).
	// Under H0 the truth f* and g are functions of x_-j and
	// E[f - g | x_-j] = 0 whatever f learned, so E[t] = 0: the test has
	// its size where the conditional sampler is right, without the paired
	// estimate's negative drift under the null (-mean((f - g)^2) for
	// squared error). Where the feature matters, T estimates about the VI
	// with the variance of the noise's part alone, about a quarter of the
	// paired estimate's (sigma^2 VI/n against 4 sigma^2 VI/n for squared
	// error), which is the power it gains. A reduced model refitted
	// without the feature (lazy, retrain) has no such property: its errors
	// and f - g covary under the null, and the test would not keep its
	// size, so those keep the estimate's test. It tests VI = 0 only: with
	// a delta other than 0, a measure that is not framework.Directional
	// (accuracy, AUC) or split inference, results keep the estimate's test
	// (TestFor; Result.Test says which test each p-value comes from).
	TestCovariance
)

// String returns "estimate" or "covariance".
func (t Test) String() string {
	switch t {
	case TestEstimate:
		return "estimate"
	case TestCovariance:
		return "covariance"
	}
	return fmt.Sprintf("Test(%d)", int(t))
}

// ParseTest parses "estimate" or "covariance".
func ParseTest(s string) (Test, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "estimate":
		return TestEstimate, nil
	case "covariance":
		return TestCovariance, nil
	}
	return 0, &framework.ChoiceError{Setting: "test", Value: s, Want: "estimate or covariance"}
}

// TestFor is the test that the options' p-values come from with measure m:
// TestCovariance where it is asked for and applies (delta 0, a
// framework.Directional measure, the paired estimate of Plain inference),
// else TestEstimate. It applies to the results of an estimator whose
// reduced model is a conditional mean of the full model
// (framework.ConditionalMean: cpi); the others keep the estimate's test,
// and each result says which (Result.Test).
func TestFor(opt InferOptions, m framework.Measure) Test {
	if opt.Test != TestCovariance || opt.Delta != 0 || opt.Inference != Plain {
		return TestEstimate
	}
	if _, ok := m.(framework.Directional); !ok {
		return TestEstimate
	}
	return TestCovariance
}

// covarianceP is the covariance test's p-value of each feature for
// estimator e: from the ensemble's averaged predictions avg where it is
// not nil (the estimator is pooled), with the repetitions' spread of the
// statistic (each laid out as the ensemble) added to its variance as
// InferRepeated adds the estimate's; else from each repetition's own folds,
// combined as repeated runs are (the mean statistic, the mean variance
// plus the spread).
func covarianceP(reps []*Reductions, avg *Reductions, m framework.Directional, e int) ([]float64, error) {
	from := reps
	if avg != nil {
		rows := ensembleRows(reps[0])
		from = make([]*Reductions, len(reps))
		for i, rep := range reps {
			one, err := average([]*Reductions{rep}, rows)
			if err != nil {
				return nil, err
			}
			from[i] = one
		}
	}
	nf := len(reps[0].Features)
	M := float64(len(from))
	stats := make([][]float64, nf) // stats[f][m]: repetition m's statistic
	vars := make([]float64, nf)    // the mean of their variances
	for i, r := range from {
		for f := range nf {
			t, v, err := r.covariance(m, e, f)
			if err != nil {
				return nil, fmt.Errorf("covariance test, repetition %d: %w", i+1, err)
			}
			stats[f] = append(stats[f], t)
			vars[f] += v / M
		}
	}
	ps := make([]float64, nf)
	for f := range nf {
		t, v := mean(stats[f]), vars[f]
		if avg != nil {
			var err error
			if t, v, err = avg.covariance(m, e, f); err != nil {
				return nil, fmt.Errorf("covariance test, ensemble: %w", err)
			}
		}
		v += varOf(stats[f]) / M
		ps[f] = OneSidedPValue(t, math.Sqrt(v), 0)
	}
	return ps, nil
}

// covariance is the covariance statistic of estimator e's reduction of
// feature f over r's folds and its squared standard error, combined as
// Plain combines the paired estimate's: the mean over the folds of each
// fold's mean, and the mean of their variances over n.
func (r *Reductions) covariance(m framework.Directional, e, f int) (t, v float64, err error) {
	n := 0
	for k, p := range r.Folds {
		full := p.FullEval
		if k < len(r.Base) && r.Base[k][e].Pred != nil {
			full = r.Base[k][e].Pred
		}
		red := r.Reduced[k][e][f]
		if red.Pred == nil {
			return 0, 0, fmt.Errorf("fold %d: no reduced predictions of feature %s", k+1, r.Features[f].Name)
		}
		d, err := m.Directional(p.YEval, meanPrediction(red), full)
		if err != nil {
			return 0, 0, fmt.Errorf("fold %d, feature %s: %w", k+1, r.Features[f].Name, err)
		}
		t += mean(d)
		v += varOf(d)
		n += len(d)
	}
	K := float64(len(r.Folds))
	return t / K, v / K / float64(n), nil
}

// meanPrediction is the reduced model's prediction: Pred, or the mean of
// Pred and the Draws (the reduced model averaged over its random draws).
func meanPrediction(red framework.Reduced) mat.Matrix {
	if len(red.Draws) == 0 {
		return red.Pred
	}
	var sum mat.Dense
	sum.CloneFrom(red.Pred)
	for _, d := range red.Draws {
		sum.Add(&sum, d)
	}
	sum.Scale(1/float64(1+len(red.Draws)), &sum)
	return &sum
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
