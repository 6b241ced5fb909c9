package main

import (
	"context"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
)

// The prelude that estimate, roar, shapley and train share once their own
// flags are checked: the data and output flags checked, the command's
// model file read, the data loaded and the Config the flags give; then the
// backend started, checked against the data and the estimators, and the
// training announced.

// setup checks the data and output flags (dataFlags.check), reads the
// command's model file with model (nil: the command takes none) and loads
// the data.
func (f *dataFlags) setup(ctx context.Context, a *app, set map[string]bool, model func(*dataRun) error) (*dataRun, *dataio.Dataset, error) {
	r, err := f.check(a, set)
	if err != nil {
		return nil, nil, err
	}
	if model != nil {
		if err := model(r); err != nil {
			return nil, nil, err
		}
	}
	d, err := r.load(ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := r.checkLoaded(); err != nil {
		return nil, nil, err
	}
	return r, d, nil
}

// splitConfig is the Config of a command that uses one train/evaluation
// split (roar, shapley): the data and fit flags' settings, the model file
// saved (nil: none) and the train rows that ests need.
func (f *fitFlags) splitConfig(r *dataRun, saved *dataio.SavedModel, set map[string]bool, ests []framework.Estimator) (pipeline.Config, error) {
	cfg := r.config(nil)
	f.config(&cfg)
	if pipeline.Folds(r.partition) >= 2 {
		return cfg, framework.Usagef("--split-column %s has fold numbers; vi %s uses one train/evaluation split: mark the rows train or eval", r.split, r.cmd)
	}
	if set["train-frac"] && r.partition != nil {
		return cfg, framework.Usagef("--train-frac and --%s exclude each other: the evaluation rows are given", evalFlagName(r.evalData))
	}
	if err := f.useSplitModel(&cfg, saved, set); err != nil {
		return cfg, err
	}
	cfg.MinTrain = pipeline.MinTrainFor(ests)
	return cfg, nil
}

// start opens the backend under the progress bar prog, checks that its
// models fit d and run ests, and announces the training; closeBackend
// stops the backend.
func (r *dataRun) start(ctx context.Context, prog *progress.Meter, d *dataio.Dataset, ests []framework.Estimator) (be framework.Backend, closeBackend func() error, err error) {
	be, closeBackend, err = r.open(ctx, prog)
	if err != nil {
		return nil, nil, err
	}
	if err := r.checkBackend(be, d, ests); err != nil {
		_ = closeBackend() // the check's error is the one to report
		return nil, nil, err
	}
	r.training(prog, d)
	return be, closeBackend, nil
}
