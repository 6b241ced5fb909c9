package inferflags

import (
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// Options checks the flags against each other, once Defaults has set
// theirs, and returns the inference options they give at level; set holds
// the names of the flags given. --debias, --bias-aware and --score-upper
// not given follow the inference: on for the paired estimate of the
// ensemble (--bias-aware with --debias), off for split inference.
func (f *Flags) Options(set map[string]bool, level float64) (inference.InferOptions, error) {
	if f.CrossFit >= 2 && set["train-frac"] {
		return inference.InferOptions{}, framework.Usagef("--train-frac and --crossfit exclude each other (cross-fitting evaluates every fold in turn)")
	}
	if f.Repeats < 1 {
		return inference.InferOptions{}, framework.Usagef("--repeats must be at least 1, got %d", f.Repeats)
	}
	if !(f.Perturb > 0 && f.Perturb <= inference.MaxPerturb) {
		return inference.InferOptions{}, framework.Usagef("--perturb must be in (0, %g], got %g", float64(inference.MaxPerturb), f.Perturb)
	}
	method := f.method
	if f.auto && f.Ensemble {
		method = inference.Plain // lazyvi.EnsembleDefault's
	}
	paired := f.Ensemble && method != inference.Split
	if !set["debias"] {
		f.Debias = paired
	}
	if !set["bias-aware"] {
		f.BiasAware = f.Debias
	}
	if f.TwoSided && !f.BiasAware {
		return inference.InferOptions{}, framework.Usagef("--bias-two-sided goes with --bias-aware")
	}
	if !set["score-upper"] {
		f.ScoreUpper = method != inference.Split
	}
	if f.ScoreUpper && method == inference.Split {
		return inference.InferOptions{}, framework.Usagef("--score-upper needs the paired estimate (--inference plain or perturbed, or auto on the ensemble)")
	}
	if (f.Debias || f.BiasAware) && !paired {
		return inference.InferOptions{}, framework.Usagef("--debias and --bias-aware need the ensemble (--ensemble, the default) with --inference plain or perturbed: they correct the paired estimate of averaged predictions")
	}
	return inference.InferOptions{
		Inference:    method,
		Level:        level,
		Perturb:      f.Perturb,
		Ensemble:     f.Ensemble,
		Debias:       f.Debias,
		BiasAware:    f.BiasAware,
		DirectedBias: f.BiasAware && !f.TwoSided,
		ScoreUpper:   f.ScoreUpper,
		Delta:        f.Delta,
		Test:         f.testKind,
		Adjust:       f.adjustment,
		CITruncate:   f.CITruncate,
	}, nil
}
