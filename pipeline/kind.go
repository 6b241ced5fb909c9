package pipeline

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// kindChoice is what chooseKind found: the folds of the chosen kind, the
// choice for the report, the rivals' out-of-fold predictions (by name, for
// the baselines that are the same models) and why a rival was not scored.
type kindChoice struct {
	folds  []*framework.Problem
	rival  *Baseline // the rival chosen; nil when the backend's model is kept
	choice *dataio.ModelChoice
	preds  map[string][]*mat.Dense
	notes  []string
}

// asRival is cfg with the full model of rival b: its backend and options,
// without candidates or rivals, and without the baselines that are b
// itself (the full model would be compared with itself).
func (cfg Config) asRival(b Baseline) Config {
	c := cfg
	c.Backend, c.BackendName, c.Options = b.Backend, b.Name, b.Options
	c.Candidates, c.Rivals = nil, nil
	c.Baselines = slices.DeleteFunc(slices.Clone(cfg.Baselines), func(x Baseline) bool { return x.Name == b.Name })
	return c
}

// choosesKind reports whether a run of cfg chooses its full model's kind
// (chooseKind) in its first repetition: it has rivals, and no model file
// or pretrained network fixes the kind.
func (cfg Config) choosesKind() bool {
	return len(cfg.Rivals) > 0 && cfg.Saved == nil && !cfg.Pretrained()
}

// PrepareChosen prepares cfg.CrossFit folds (one split below 2) and, with
// cfg.Rivals, chooses the full model's kind against them as Run chooses it
// in its first repetition: it returns the chosen kind's folds, cfg for
// that kind (a rival's backend and options, without candidates or rivals:
// the config that prepares the kind's other repetitions) and the choice
// (nil without rivals, with a saved or pretrained model, or where nothing
// was compared). The caller closes the folds.
func PrepareChosen(ctx context.Context, d *dataio.Dataset, cfg Config, workers int) ([]*framework.Problem, Config, *dataio.ModelChoice, error) {
	folds, err := prepareRun(ctx, d, cfg, workers)
	if err != nil || !cfg.choosesKind() {
		return folds, cfg, nil, err
	}
	kc, err := chooseKind(ctx, d, cfg, folds, workers)
	if err != nil {
		closeAll(folds)
		return nil, cfg, nil, err
	}
	if kc.rival != nil {
		cfg = cfg.asRival(*kc.rival)
	}
	return kc.folds, cfg, kc.choice, nil
}

// chooseKind fits every rival of cfg (Config.Rivals) that fits the task on
// the folds of the first repetition (cfg is that repetition's), scores
// them and the backend's full models by the task's default measure (a
// proper loss: mse, logloss) on the same out-of-fold rows, and keeps the
// backend's model only where it beats every rival by more than the
// standard error of the difference; otherwise the rival with the lowest
// loss among those it does not beat so. The models not chosen are
// released. Without a registered default measure nothing is compared.
func chooseKind(ctx context.Context, d *dataio.Dataset, cfg Config, folds []*framework.Problem, workers int) (*kindChoice, error) {
	kc := &kindChoice{folds: folds, preds: map[string][]*mat.Dense{}}
	task := folds[0].Task
	m, err := framework.LookupMeasure(task.DefaultMeasure())
	if err != nil {
		return kc, nil
	}
	own := make([]*mat.Dense, len(folds))
	for k, p := range folds {
		own[k] = p.FullEval
	}
	choice := &dataio.ModelChoice{Chosen: cfg.BackendName, Measure: m.Name()}
	var ownScore float64
	best, bestScore := -1, math.Inf(-1)
	var rivals [][]*framework.Problem
	for _, b := range cfg.Rivals {
		if !supportsTask(b.Backend.Capabilities(), task) {
			continue
		}
		rf, err := prepareRun(ctx, d, cfg.asRival(b), workers)
		if err != nil {
			if ctx.Err() != nil {
				closeAll(rivals...)
				return nil, ctx.Err()
			}
			kc.notes = append(kc.notes, fmt.Sprintf("the %s model was not compared with the full model: %v", b.Name, err))
			continue
		}
		preds := make([]*mat.Dense, len(rf))
		for k, p := range rf {
			preds[k] = p.FullEval
		}
		g, err := pairedGain(m, folds, own, preds)
		if err != nil {
			closeAll(append(rivals, rf)...)
			return nil, fmt.Errorf("model choice, %s: %w", b.Name, err)
		}
		ownScore = g.scoreA
		if slices.ContainsFunc(cfg.Baselines, func(x Baseline) bool { return x.Name == b.Name && maps.Equal(x.Options, b.Options) }) {
			kc.preds[b.Name] = preds // the baseline is this model: diagnose need not fit it again
		}
		choice.Kinds = append(choice.Kinds, dataio.KindScore{Name: b.Name, Model: describeModel(rf[0]),
			Loss: lossOrScore(m, g.scoreB), Diff: g.gain, DiffSE: g.se})
		if !(g.gain > g.se) && g.scoreB > bestScore {
			best, bestScore = len(rivals), g.scoreB
		}
		rivals = append(rivals, rf)
	}
	if len(rivals) == 0 {
		return kc, nil
	}
	ownKind := dataio.KindScore{Name: cfg.BackendName, Model: describeModel(folds[0]), Loss: lossOrScore(m, ownScore)}
	choice.Kinds = append([]dataio.KindScore{ownKind}, choice.Kinds...)
	kc.choice = choice
	if best < 0 {
		choice.Reason = fmt.Sprintf("%s beats %s by more than the standard error of the difference", cfg.BackendName, rivalNames(choice.Kinds[1:]))
		closeAll(rivals...)
		return kc, nil
	}
	r := choice.Kinds[best+1]
	choice.Chosen = r.Name
	choice.Reason = fmt.Sprintf("%s does not beat %s by more than the standard error of the difference: the simpler model is kept", cfg.BackendName, r.Name)
	if r.Diff < 0 {
		choice.Reason = fmt.Sprintf("%s's loss is lower than %s's", r.Name, cfg.BackendName)
	}
	for i, b := range cfg.Rivals {
		if b.Name == r.Name {
			kc.rival = &cfg.Rivals[i]
		}
	}
	kc.folds = rivals[best]
	closeAll(folds)
	closeAll(append(rivals[:best:best], rivals[best+1:]...)...)
	delete(kc.preds, r.Name)
	return kc, nil
}

// rivalNames joins the kinds' names: "linear", "linear and forest".
func rivalNames(ks []dataio.KindScore) string {
	s := ""
	for i, k := range ks {
		switch {
		case i == 0:
		case i == len(ks)-1:
			s += " and "
		default:
			s += ", "
		}
		s += k.Name
	}
	return s
}

// describeModel says what a fold's full model is: its FitReport's
// architecture, else the candidate chosen.
func describeModel(p *framework.Problem) string {
	if a := p.FitReport.Architecture; a != "" {
		return a
	}
	return p.Chosen
}

// closeAll releases the full models of every set of folds.
func closeAll(sets ...[]*framework.Problem) {
	for _, fs := range sets {
		for _, p := range fs {
			p.Close()
		}
	}
}

// gainOf is two models' mean scores over the folds and the mean of their
// difference, with its standard error.
type gainOf struct {
	scoreA, scoreB, gain, se float64
}

// pairedGain scores predictions a and b (one per fold) on the folds'
// evaluation rows: gain is a's score minus b's averaged over the folds, se
// its standard error from the per-row influence differences (the folds
// independent: the variances of their means add).
func pairedGain(m framework.Measure, folds []*framework.Problem, a, b []*mat.Dense) (gainOf, error) {
	var g gainOf
	k := float64(len(folds))
	for f, p := range folds {
		sa, err := m.Evaluate(p.YEval, a[f])
		if err != nil {
			return gainOf{}, err
		}
		sb, err := m.Evaluate(p.YEval, b[f])
		if err != nil {
			return gainOf{}, err
		}
		diff := make([]float64, len(sa.Influence))
		for j := range diff {
			diff[j] = sa.Influence[j] - sb.Influence[j]
		}
		g.scoreA += sa.Value / k
		g.scoreB += sb.Value / k
		g.gain += (sa.Value - sb.Value) / k
		g.se += sqSE(diff) / (k * k)
	}
	g.se = math.Sqrt(g.se)
	return g, nil
}

// lossOrScore is score as a person reads it under m: the loss (-score) for
// a framework.Loss, the score itself otherwise.
func lossOrScore(m framework.Measure, score float64) float64 {
	if l := framework.LossOf(m, score); l != nil {
		return *l
	}
	return score
}
