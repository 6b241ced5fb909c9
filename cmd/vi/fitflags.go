package main

import (
	"flag"
	"runtime"

	"github.com/lazyvi/lazyvi/framework"
)

// fitFlags are the flags of every command that fits models (vi estimate,
// shapley and roar): the split, the seed, the workers, the level of the
// intervals and lazy's settings. newFitFlags registers them on a command's
// flag set with the library's defaults; check checks them; config is the
// one place their values reach a framework.Config.
type fitFlags struct {
	trainFrac float64
	seed      int64
	workers   int
	level     float64
	folds     int     // lazy: cross-validation folds for the ridge penalty
	lambda    float64 // lazy: a fixed ridge penalty (0: by cross-validation)
	esSteps   int     // lazy-es: optimizer steps (0: one epoch)
}

// fitUsage is the help text of each fit flag, unless the command gives its
// own to newFitFlags.
var fitUsage = map[string]string{
	"train-frac": "`share` of rows in the train split",
	"seed":       "random `seed` of the split, the training and the folds",
	"workers":    "fit `N` reduced models at a time",
	"level":      "`level` of the confidence intervals",
	"folds":      "cross-validation `folds` for lazy's ridge penalty",
	"lambda":     "fix lazy's ridge penalty to `L` (0: by cross-validation)",
	"es-steps":   "lazy-es: optimizer `steps` from the full model's parameters (0: one epoch)",
}

// defaultSeed is --seed's default. The library takes Config.Seed as given
// (0 is a seed like any other), so this one default is vi's own.
const defaultSeed = 1

// newFitFlags registers the fit flags on fs: all of them but --es-steps,
// which only commands that run lazy-es take (withESSteps); usage replaces
// the help text of the flags it names.
func newFitFlags(fs *flag.FlagSet, withESSteps bool, usage map[string]string) *fitFlags {
	help := groupUsage("newFitFlags", fitUsage, usage)
	f := &fitFlags{}
	fs.Float64Var(&f.trainFrac, "train-frac", framework.DefaultTrainFrac, help("train-frac"))
	fs.Int64Var(&f.seed, "seed", defaultSeed, help("seed"))
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), help("workers"))
	fs.Float64Var(&f.level, "level", framework.DefaultLevel, help("level"))
	fs.IntVar(&f.folds, "folds", framework.DefaultFolds, help("folds"))
	fs.Float64Var(&f.lambda, "lambda", 0, help("lambda"))
	if withESSteps {
		fs.IntVar(&f.esSteps, "es-steps", 0, help("es-steps"))
	}
	return f
}

// check checks the fit flags, in this order: --level, --train-frac,
// --folds, --lambda, --es-steps and --workers.
func (f *fitFlags) check() error {
	switch {
	case !(f.level > 0 && f.level < 1):
		return framework.Usagef("--level must be in (0, 1), got %g", f.level)
	case !(f.trainFrac > 0 && f.trainFrac < 1):
		return framework.Usagef("--train-frac must be in (0, 1), got %g", f.trainFrac)
	case f.folds < 2:
		return framework.Usagef("--folds must be at least 2, got %d", f.folds)
	case f.lambda < 0:
		return framework.Usagef("--lambda must be >= 0 (0: by cross-validation), got %g", f.lambda)
	case f.esSteps < 0:
		return framework.Usagef("--es-steps must be >= 0 (0: one epoch), got %d", f.esSteps)
	case f.workers < 1:
		return framework.Usagef("--workers must be at least 1, got %d", f.workers)
	}
	return nil
}

// config sets the split, the seed and the estimators' settings of cfg from
// the flags: the one place where lazy's and lazy-es's settings are passed.
func (f *fitFlags) config(cfg *framework.Config) {
	cfg.TrainFrac, cfg.Seed = f.trainFrac, f.seed
	cfg.Folds, cfg.Lambda, cfg.ESSteps = f.folds, f.lambda, f.esSteps
}
