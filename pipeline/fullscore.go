package pipeline

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// rescore makes the report's full-model numbers the ones its VIs are
// computed from, and the baselines' gains the differences of the scores
// it reports. With an ensemble the full model is the ensemble (each row's
// out-of-fold predictions averaged over the repetitions): its score, R²,
// accuracy and AUC are the ensemble's on every evaluated row, each
// baseline is scored on the same rows (its out-of-fold predictions of
// the first repetition) and its gain and the gain's standard error come
// from the paired per-row differences. Without one, each gain is the full
// model's score minus the baseline's.
func (s *runState) rescore(rep *Report) error {
	if !s.opt.Ensemble || len(s.reds) < 2 {
		for i := range rep.Full.Baselines {
			b := &rep.Full.Baselines[i]
			b.Gain = rep.Full.Score - b.Score
		}
		return nil
	}
	e, err := ensembleOf(s.reds[0].Folds, s.repFolds())
	if err != nil {
		return err
	}
	full, err := s.m.Evaluate(e.y, e.full)
	if err != nil {
		return fmt.Errorf("the full model's ensemble: %w", err)
	}
	if err := checkScore(full.Value); err != nil {
		return fmt.Errorf("measure %s of the full model's ensemble: %w", s.m.Name(), err)
	}
	single := rep.Full.Score
	rep.Full.SingleScore, rep.Full.SingleLoss = &single, framework.LossOf(s.m, single)
	rep.Full.Score, rep.Full.Loss = full.Value, framework.LossOf(s.m, full.Value)
	if rep.Full.R2 != nil {
		r2 := rSquared(e.y, e.full)
		rep.Full.R2 = &r2
	}
	var c classScores
	c.add(&framework.Problem{Task: s.first.Task, YEval: e.y, FullEval: e.full})
	if c.nAcc > 0 || c.nAUC > 0 {
		rep.Full.Accuracy, rep.Full.AUC = c.means()
	}
	for i := range rep.Full.Baselines {
		if i >= len(s.basePreds) {
			break
		}
		b := &rep.Full.Baselines[i]
		pred := e.pooled(s.reds[0].Folds, s.basePreds[i])
		bs, err := s.m.Evaluate(e.y, pred)
		if err != nil {
			return fmt.Errorf("baseline %s: %w", b.Name, err)
		}
		diff := make([]float64, len(bs.Influence))
		for j := range diff {
			diff[j] = full.Influence[j] - bs.Influence[j]
		}
		b.Score, b.Loss = bs.Value, framework.LossOf(s.m, bs.Value)
		b.SE, b.Gain, b.GainSE = math.Sqrt(sqSE(bs.Influence)), full.Value-bs.Value, math.Sqrt(sqSE(diff))
	}
	return nil
}

// checkScore reports a score that is not finite.
func checkScore(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%g: %w", v, framework.ErrNonFinite)
	}
	return nil
}

// repFolds are the folds of every repetition.
func (s *runState) repFolds() [][]*framework.Problem {
	out := make([][]*framework.Problem, len(s.reds))
	for i, r := range s.reds {
		out[i] = r.Folds
	}
	return out
}

// ensemble is the full model's ensemble on the evaluated rows, in data
// row order: their responses, and each row's out-of-fold predictions
// averaged over the repetitions.
type ensemble struct {
	rows []int
	pos  map[int]int
	y    []float64
	full *mat.Dense
}

// ensembleOf averages the full models' predictions of the repetitions
// reps (each a cross-fit that evaluates the rows of first, each once).
func ensembleOf(first []*framework.Problem, reps [][]*framework.Problem) (*ensemble, error) {
	e := &ensemble{pos: map[int]int{}}
	for _, p := range first {
		e.rows = append(e.rows, p.EvalRows...)
	}
	slices.Sort(e.rows)
	for i, r := range e.rows {
		e.pos[r] = i
	}
	n := len(e.rows)
	_, outs := first[0].FullEval.Dims()
	e.y, e.full = make([]float64, n), mat.NewDense(n, outs, nil)
	w := 1 / float64(len(reps))
	for m, folds := range reps {
		count := 0
		for _, p := range folds {
			if len(p.EvalRows) != len(p.YEval) {
				return nil, fmt.Errorf("ensemble: repetition %d does not name its evaluation rows", m+1)
			}
			for i, row := range p.EvalRows {
				at, ok := e.pos[row]
				if !ok {
					return nil, fmt.Errorf("ensemble: repetition %d evaluates data row %d, which the first does not", m+1, row+1)
				}
				e.y[at] = p.YEval[i]
				dst, src := e.full.RawRowView(at), p.FullEval.RawRowView(i)
				for j := range dst {
					dst[j] += w * src[j]
				}
				count++
			}
		}
		if count != n {
			return nil, fmt.Errorf("ensemble: repetition %d evaluates %d rows, the first %d", m+1, count, n)
		}
	}
	return e, nil
}

// pooled lays out predictions given per fold of folds (preds[k] on fold
// k's evaluation rows) in the ensemble's row order.
func (e *ensemble) pooled(folds []*framework.Problem, preds []*mat.Dense) *mat.Dense {
	_, outs := e.full.Dims()
	out := mat.NewDense(len(e.rows), outs, nil)
	for k, p := range folds {
		for i, row := range p.EvalRows {
			out.SetRow(e.pos[row], preds[k].RawRowView(i))
		}
	}
	return out
}
