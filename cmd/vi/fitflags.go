package main

import (
	"flag"
	"runtime"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// fitFlags are the flags of every command that fits models (vi estimate,
// shapley and roar): the split, the seed, the workers, the level of the
// intervals and the estimators' settings (--folds, --lambda, --es-steps:
// settingFlags). newFitFlags registers them on a command's flag set with
// the library's defaults; check checks them; estimators and config are the
// places their values reach the estimators and the pipeline.Config.
type fitFlags struct {
	trainFrac float64
	seed      int64
	workers   int
	level     float64
	settings  *settingFlags
}

// fitUsage is the help text of each fit flag, unless the command gives its
// own to newFitFlags; the estimators describe their settings themselves.
var fitUsage = map[string]string{
	"train-frac": "`share` of rows in the train split",
	"seed":       "random `seed` of the split, the training and the folds",
	"workers":    "fit `N` reduced models at a time",
	"level":      "`level` of the confidence intervals",
}

// defaultSeed is --seed's default. The library takes Config.Seed as given
// (0 is a seed like any other), so this one default is vi's own.
const defaultSeed = 1

// newFitFlags registers the fit flags on fs; usage replaces the help text
// of the flags it names.
func newFitFlags(fs *flag.FlagSet, usage map[string]string) *fitFlags {
	help := groupUsage("newFitFlags", fitUsage, usage)
	f := &fitFlags{}
	fs.Float64Var(&f.trainFrac, "train-frac", pipeline.DefaultTrainFrac, help("train-frac"))
	fs.Int64Var(&f.seed, "seed", defaultSeed, help("seed"))
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), help("workers"))
	fs.Float64Var(&f.level, "level", inference.DefaultLevel, help("level"))
	f.settings = newSettingFlags(fs)
	return f
}

// check checks the fit flags, in this order: --level, --train-frac, the
// estimators' settings and --workers.
func (f *fitFlags) check() error {
	switch {
	case !(f.level > 0 && f.level < 1):
		return framework.Usagef("--level must be in (0, 1), got %g", f.level)
	case !(f.trainFrac > 0 && f.trainFrac < 1):
		return framework.Usagef("--train-frac must be in (0, 1), got %g", f.trainFrac)
	}
	if err := f.settings.check(); err != nil {
		return err
	}
	if f.workers < 1 {
		return framework.Usagef("--workers must be at least 1, got %d", f.workers)
	}
	return nil
}

// estimators resolves a comma-separated list of estimator names, each
// configured with the settings given (--folds, --lambda, --es-steps).
func (f *fitFlags) estimators(list string) ([]framework.Estimator, error) {
	return f.settings.lookup(list)
}

// config sets the split and the seed of cfg from the flags.
func (f *fitFlags) config(cfg *pipeline.Config) {
	cfg.TrainFrac, cfg.Seed = f.trainFrac, f.seed
}
