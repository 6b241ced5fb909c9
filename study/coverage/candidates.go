package coverage

import (
	"strconv"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// candidate is one inference scheme of the study: which fits it reads
// (the single split, the first cross-fit, or all repetitions of it) and
// how it infers from them.
type candidate struct {
	Name   string
	Scheme scheme
	Opt    inference.InferOptions
}

type scheme int

const (
	singleSplit    scheme = iota // one train/evaluation split (--train-frac 2/3)
	crossFit                     // K folds, the first fold assignment
	repeated                     // K folds, every repetition combined
	repeatedWithin               // repeated, the spread of the repetitions' estimates left out of se
	ensembled                    // K folds, every repetition's predictions averaged per row
)

// candidates lists the study's inference candidates for rho values rhos;
// without repetitions (repeats 1) the repeated ones are left out.
func candidates(rhos []float64, repeats int) []candidate {
	inf := func(i inference.Inference, rho float64) inference.InferOptions {
		return inference.InferOptions{Inference: i, Perturb: rho}
	}
	cs := []candidate{
		{"split", singleSplit, inf(inference.Split, 0)},
		{"plain", singleSplit, inf(inference.Plain, 0)},
		{"cv-split", crossFit, inf(inference.Split, 0)},
		{"cv-plain", crossFit, inf(inference.Plain, 0)},
	}
	for _, r := range rhos {
		cs = append(cs, candidate{"cv-perturbed" + rhoSuffix(r, rhos), crossFit, inf(inference.Perturbed, r)})
	}
	if repeats < 2 {
		return cs
	}
	var def pipeline.EstimateOptions
	lazyvi.EnsembleDefault(&def)
	cs = append(cs,
		// vi estimate's default.
		candidate{"default", ensembled, inference.InferOptions{Inference: def.Inference, Debias: def.Debias, BiasAware: def.BiasAware, DirectedBias: def.DirectedBias, ScoreUpper: def.ScoreUpper, Test: def.Test, Perturb: rhos[0]}},
		// The default with every p-value from the estimate's own test
		// (the covariance test's applies to cpi).
		candidate{"default-estimate", ensembled, inference.InferOptions{Inference: def.Inference, Debias: def.Debias, BiasAware: def.BiasAware, DirectedBias: def.DirectedBias, ScoreUpper: def.ScoreUpper, Test: inference.TestEstimate, Perturb: rhos[0]}},
		candidate{"rep-split", repeated, inf(inference.Split, 0)},
		candidate{"rep-plain", repeated, inf(inference.Plain, 0)},
		candidate{"ens-split", ensembled, inf(inference.Split, 0)},
		candidate{"ens-plain", ensembled, inf(inference.Plain, 0)})
	for _, r := range rhos {
		cs = append(cs, candidate{"ens-perturbed" + rhoSuffix(r, rhos), ensembled, inf(inference.Perturbed, r)})
	}
	debiased := inf(inference.Plain, 0)
	debiased.Debias = true
	aware := inf(inference.Plain, 0)
	aware.BiasAware = true
	both := debiased
	both.BiasAware = true
	score := debiased
	score.ScoreUpper = true
	bothScore := both
	bothScore.ScoreUpper = true
	directed := bothScore
	directed.DirectedBias = true
	cs = append(cs,
		candidate{"ens-debiased", ensembled, debiased},
		candidate{"ens-debiased-score", ensembled, score},
		candidate{"ens-plain-aware", ensembled, aware},
		candidate{"ens-debiased-aware", ensembled, both},
		candidate{"ens-debiased-aware-score", ensembled, bothScore},
		candidate{"ens-debiased-directed-score", ensembled, directed})
	for _, r := range rhos {
		o := inf(inference.Perturbed, r)
		o.Debias = true
		cs = append(cs, candidate{"ens-debiased-perturbed" + rhoSuffix(r, rhos), ensembled, o})
	}
	for _, r := range rhos {
		cs = append(cs, candidate{"rep-perturbed" + rhoSuffix(r, rhos), repeated, inf(inference.Perturbed, r)})
	}
	for _, r := range rhos {
		cs = append(cs, candidate{"rep-perturbed" + rhoSuffix(r, rhos) + "-notrain", repeatedWithin, inf(inference.Perturbed, r)})
	}
	return cs
}

// rhoSuffix names rho in a candidate when the study has several.
func rhoSuffix(r float64, rhos []float64) string {
	if len(rhos) == 1 {
		return ""
	}
	return "-" + strconv.FormatFloat(r, 'g', -1, 64)
}
