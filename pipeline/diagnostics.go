package pipeline

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/framework"
)

// Baseline is a reference model that Run scores beside the full model, on
// the same train and evaluation rows (Config.Baselines): vi passes the
// linear backend (OLS, logistic regression).
type Baseline struct {
	Name    string
	Backend framework.Backend
	Options map[string]string
}

// BaselineScore is a baseline's score on the evaluation rows, and how much
// the full model beats it. Gain = full score - Score; GainSE is its
// standard error, from the paired per-row influence differences.
type BaselineScore struct {
	Name  string  `json:"name"`
	Score float64 `json:"score"`
	// Loss, for a loss measure, is the loss itself, -Score.
	Loss   *float64 `json:"loss,omitempty"`
	SE     float64  `json:"se"`
	Gain   float64  `json:"gain"`
	GainSE float64  `json:"gain_se"`
}

// InterceptName is the name of the intercept-only baseline, which Run
// always scores: the train mean (regression) or the train class
// frequencies (classification) for every row.
const InterceptName = "intercept"

// supportsTask reports whether a backend's models fit task t.
func supportsTask(c framework.Capabilities, t framework.Task) bool {
	switch t {
	case framework.Binary:
		return c.Classification
	case framework.Multiclass:
		return c.Multiclass
	}
	return true
}

// diagnose scores the intercept-only model and the baselines that fit the
// task on every fold (those in known by the predictions given there, one
// per fold), beside the full model, and returns them with the
// full model's R² (regression) averaged over the folds, and each
// baseline's predictions on every fold (preds[i][k], in the order of the
// scores), which rescoreEnsemble scores against an ensemble. A baseline that
// cannot be fitted or cannot predict on some fold is left out with a note
// saying why (the baselines are a diagnostic: the run's importances do not
// depend on them, and they are scored after the reductions, whose work a
// failing baseline must not throw away); a cancelled context is an error.
func diagnose(ctx context.Context, folds []*framework.Problem, m framework.Measure, baselines []Baseline, known map[string][]*mat.Dense) (*diagnosis, error) {
	fits := []Baseline{{Name: InterceptName}}
	// preds[i][k] are baseline i's predictions on fold k.
	intercept := make([]*mat.Dense, len(folds))
	for k, p := range folds {
		intercept[k] = interceptPredictions(p)
	}
	preds := [][]*mat.Dense{intercept}
	var notes []string
	for _, b := range baselines {
		if !supportsTask(b.Backend.Capabilities(), folds[0].Task) {
			continue
		}
		if ps, ok := known[b.Name]; ok {
			fits, preds = append(fits, b), append(preds, ps)
			continue
		}
		ps := make([]*mat.Dense, len(folds))
		var err error
		for k, p := range folds {
			if ps[k], err = baselinePredictions(ctx, p, b); err != nil {
				break
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			notes = append(notes, fmt.Sprintf("the %s baseline was left out of the comparison: %v", b.Name, err))
			continue
		}
		fits, preds = append(fits, b), append(preds, ps)
	}
	out := make([]BaselineScore, len(fits))
	var r2 float64
	k := float64(len(folds))
	for f, p := range folds {
		full, err := m.Evaluate(p.YEval, p.FullEval)
		if err != nil {
			return nil, fmt.Errorf("full model: %w", err)
		}
		if p.Task == framework.Regression {
			r2 += rSquared(p.YEval, p.FullEval) / k
		}
		for i, b := range fits {
			s, err := m.Evaluate(p.YEval, preds[i][f])
			if err != nil {
				return nil, fmt.Errorf("baseline %s: %w", b.Name, err)
			}
			diff := make([]float64, len(s.Influence))
			for j := range diff {
				diff[j] = full.Influence[j] - s.Influence[j]
			}
			o := &out[i]
			o.Name = b.Name
			o.Score += s.Value / k
			o.Gain += (full.Value - s.Value) / k
			// The folds are independent: variances of their means add.
			o.SE += sqSE(s.Influence) / (k * k)
			o.GainSE += sqSE(diff) / (k * k)
		}
	}
	for i := range out {
		out[i].SE, out[i].GainSE = math.Sqrt(out[i].SE), math.Sqrt(out[i].GainSE)
		out[i].Loss = framework.LossOf(m, out[i].Score)
	}
	d := &diagnosis{scores: out, notes: notes, preds: preds}
	if folds[0].Task == framework.Regression {
		d.r2 = &r2
	}
	return d, nil
}

// diagnosis is what diagnose finds: the baselines' scores, the full
// model's R² (regression), why baselines were left out, and the
// baselines' predictions on every fold.
type diagnosis struct {
	scores []BaselineScore
	r2     *float64
	notes  []string
	preds  [][]*mat.Dense
}

// sqSE is the squared standard error of a mean with influence values inf.
func sqSE(inf []float64) float64 {
	if len(inf) < 2 {
		return 0
	}
	return stat.Variance(inf, nil) / float64(len(inf))
}

// rSquared is 1 - SSE/SST of the first prediction column on y.
func rSquared(y []float64, pred mat.Matrix) float64 {
	mean := stat.Mean(y, nil)
	var sse, sst float64
	for i, v := range y {
		d := v - pred.At(i, 0)
		sse += d * d
		sst += (v - mean) * (v - mean)
	}
	return 1 - sse/sst
}

// interceptPredictions predicts, for every evaluation row, the train mean
// (regression), the train share of ones (binary) or the train class
// frequencies (multiclass).
func interceptPredictions(p *framework.Problem) *mat.Dense {
	n, _ := p.XEval.Dims()
	out := p.Outputs()
	row := make([]float64, out)
	for _, v := range p.YTrain {
		if p.Task == framework.Multiclass {
			row[int(v)]++
		} else {
			row[0] += v
		}
	}
	for j := range row {
		row[j] /= float64(len(p.YTrain))
	}
	pred := mat.NewDense(n, out, nil)
	for i := 0; i < n; i++ {
		pred.SetRow(i, row)
	}
	return pred
}

// baselinePredictions fits b on the problem's train rows and predicts its
// evaluation rows.
func baselinePredictions(ctx context.Context, p *framework.Problem, b Baseline) (*mat.Dense, error) {
	spec := framework.ModelSpec{Task: p.Task, Inputs: len(p.FeatureNames), Seed: p.Seed, Options: b.Options, Classes: p.Classes}
	m, err := fitOne(ctx, b.Backend, spec, p.XTrain, p.YTrain)
	if err != nil {
		return nil, err
	}
	defer framework.Release(m)
	return m.Predict(ctx, p.XEval)
}

// fullWarnings says what makes the VIs describe a poor model: a full model
// that does not beat the linear baselines by more than the standard error
// of the difference, or whose training ended at the epoch cap.
func fullWarnings(m framework.Measure, f FullResult) []string {
	var ws []string
	for _, b := range f.Baselines {
		if b.Gain > b.GainSE {
			continue
		}
		// A loss reads as the loss; the difference says whether the full
		// model is better or worse, and by how much.
		full, base := f.Score, b.Score
		if framework.LossOf(m, 0) != nil {
			full, base = -full, -base
		}
		diff := fmt.Sprintf("full model better by %.3g", b.Gain)
		if b.Gain < 0 {
			diff = fmt.Sprintf("full model worse by %.3g", -b.Gain)
		}
		scores := fmt.Sprintf("%s %.4g vs %.4g, %s, se %.3g", m.Name(), full, base, diff, b.GainSE)
		if b.Name == InterceptName {
			// A model no better than the training rows' mean (or class
			// shares) has found no signal: every feature's VI is near 0.
			ws = append(ws, fmt.Sprintf("the full model does not beat the intercept-only model (the training rows' mean or class shares) beyond its standard error (%s): it found no signal in the features beyond that error, so no VI can be large; check the response, the features and the number of rows",
				scores))
			continue
		}
		ws = append(ws, fmt.Sprintf("the full model does not beat the %s baseline beyond its standard error (%s): the VIs describe a model no better than %s; consider the %s backend",
			b.Name, scores, b.Name, b.Name))
	}
	if f.StoppedBy == "cap" {
		ws = append(ws, fmt.Sprintf("training of the full model ended at the epoch cap (%d epochs), not by early stopping: it may be undertrained; raise its epoch cap", f.Epochs))
	}
	return ws
}

// classScores sums a classifier's accuracy and (binary) AUC over the folds
// of a run, where the measures are registered.
type classScores struct {
	acc, auc   float64
	nAcc, nAUC int
}

// add scores fold p's full model; a measure that is not registered, or
// that cannot score the fold (auc on one class), is left out.
func (c *classScores) add(p *framework.Problem) {
	if p.Task == framework.Regression {
		return
	}
	if m, err := framework.LookupMeasure("accuracy"); err == nil {
		if s, err := m.Evaluate(p.YEval, p.FullEval); err == nil {
			c.acc += s.Value
			c.nAcc++
		}
	}
	if p.Task != framework.Binary {
		return
	}
	if m, err := framework.LookupMeasure("auc"); err == nil {
		if s, err := m.Evaluate(p.YEval, p.FullEval); err == nil {
			c.auc += s.Value
			c.nAUC++
		}
	}
}

// means returns the averages, nil where nothing was scored.
func (c *classScores) means() (acc, auc *float64) {
	if c.nAcc > 0 {
		a := c.acc / float64(c.nAcc)
		acc = &a
	}
	if c.nAUC > 0 {
		a := c.auc / float64(c.nAUC)
		auc = &a
	}
	return acc, auc
}
