package main

import (
	"slices"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// checkReference is the estimator that --check runs on the few features
// it checks: retrain, the reference that lazy stands in for.
const checkReference = "retrain"

// checkUsage is --check's help.
const checkUsage = "also retrain on the `K` features the first estimator (lazy) ranks highest, and report how its VIs agree with retrain's there (each checked feature costs a training per model)"

// checkOption returns the pipeline.Check of --check K (none for 0): the
// reference estimator, which must not run on every feature already, nor
// with a shard, whose features are not the whole run's.
func (o *estimateOptions) checkOption(ests []framework.Estimator, sharded bool) (pipeline.Check, error) {
	switch {
	case o.check == 0:
		return pipeline.Check{}, nil
	case o.check < 0:
		return pipeline.Check{}, framework.Usagef("--check %d: want a number of features, 1 or more (0: no check)", o.check)
	case sharded:
		return pipeline.Check{}, framework.Usagef("--check checks the whole run's most important features: not with --shard (run it unsharded, or 'vi bench data')")
	}
	if i := slices.IndexFunc(ests, func(e framework.Estimator) bool { return e.Name() == checkReference }); i >= 0 {
		return pipeline.Check{}, framework.Usagef("--check %d runs %s on a few features, and --estimators %s already runs it on every feature: drop one", o.check, checkReference, o.estimators)
	}
	ref, err := o.fit.estimators(checkReference)
	if err != nil {
		return pipeline.Check{}, err
	}
	return pipeline.Check{K: o.check, Estimator: ref[0]}, nil
}

// defaultFirst is the estimator heading the default list, whose table
// answers "what matters?".
const defaultFirst = "lazy"

// fittingDefaults is the default estimators without those the backend
// cannot run, and a note saying what changed ("" when nothing did): where
// the backend cannot run lazy, retrain takes its place at the head of the
// list (pipeline.FittingDefaults), since dropout alone is biased up for
// correlated features.
func (o *estimateOptions) fittingDefaults(name string, caps framework.Capabilities, ests []framework.Estimator) ([]framework.Estimator, string, error) {
	ref, err := o.fit.estimators(checkReference)
	if err != nil {
		return nil, "", err
	}
	out, note := pipeline.FittingDefaults(name, caps, ests, defaultFirst, ref[0])
	if note != "" {
		note = "vi: " + note
	}
	return out, note, nil
}

// forecastShape is what the forecast needs to know of a run's shape: the
// check's reductions in each repetition (a training each, on every fold)
// and the full models each repetition trains.
func forecastShape(cfg pipeline.Config, eopt pipeline.EstimateOptions) (checkJobs, models int) {
	models = max(cfg.CrossFit, 1)
	return eopt.Check.K * models, models
}
