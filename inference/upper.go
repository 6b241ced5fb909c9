package inference

import (
	"fmt"
	"math"

	"github.com/lazyvi/lazyvi/framework"
)

// scoreUpper is the distance from the estimate to the upper end of a
// ScoreUpper interval: the largest v above the estimate that a test at
// the interval's level does not reject when the estimate's variance is
// the one it would have at v, se^2 + c (v - vi), c the growth of that
// variance per unit of VI. It solves x = z sqrt(se^2 + c x),
//
//	x = (z^2 c + sqrt(z^4 c^2 + 4 z^2 se^2))/2,
//
// which is z se when c is 0 and at least z se otherwise.
func scoreUpper(z, se, c float64) float64 {
	if !(c > 0) {
		return z * se
	}
	a := z * z * c
	return (a + math.Sqrt(a*a+4*z*z*se*se)) / 2
}

// growth is the growth c of the paired estimate's variance per unit of VI
// for estimator e (framework.SignalVarianceReporter over the rows of one
// repetition, divided by their number), 0 for a measure that does not
// say. With an ensemble (avg, its averaged predictions) it is the
// ensemble's; otherwise the mean over the repetitions of their folds'
// growth, each weighted by its rows. The full model is the estimator's
// baseline where it has one, as for the estimate.
func growth(reps []*Reductions, avg *Reductions, m framework.Measure, e int) (float64, error) {
	sv, ok := m.(framework.SignalVarianceReporter)
	if !ok {
		return 0, nil
	}
	if avg != nil {
		reps = []*Reductions{avg}
	}
	var sum float64
	var rows int
	for _, r := range reps {
		rows = 0
		for k, p := range r.Folds {
			pred := p.FullEval
			if k < len(r.Base) && r.Base[k][e].Pred != nil {
				pred = r.Base[k][e].Pred
			}
			g, err := sv.SignalVariance(p.YEval, pred)
			if err != nil {
				return 0, fmt.Errorf("measure %s: the growth of the variance: %w", m.Name(), err)
			}
			sum += g * float64(len(p.YEval))
			rows += len(p.YEval)
		}
	}
	// sum is over len(reps) repetitions of rows rows each: the mean growth
	// per row is sum/(len(reps) rows), and a mean over rows rows divides
	// it by rows again.
	return sum / float64(len(reps)*rows) / float64(rows), nil
}
