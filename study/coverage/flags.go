package coverage

import (
	"context"
	"flag"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// Flags are the study's flags, as "vi bench coverage" takes them: Register
// defines them on a flag set, Config checks them and returns the study
// they ask for, with the built-in mlp backend in this process (the study
// is about the statistics, not the transport).
type Flags struct {
	setting, data, target        string
	signal, copyCorr, rho, level float64
	reps, n, crossfit, repeats   int
	lazyFolds, workers           int
	estimators, perturb, hidden  string
	seed                         int64
	choose                       bool
}

// Register defines the study's flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.setting, "setting", "linear", "`setting`: linear or binary (simulated), or semi (--data with a planted null and signal)")
	fs.StringVar(&f.data, "data", "", "semi: the CSV `file` (default: the built-in diabetes data)")
	fs.StringVar(&f.target, "target", "", "semi: the response `column` (default: the last)")
	fs.Float64Var(&f.signal, "signal", 0.05, "semi: the planted signal's VI b^2 as a `share` of Var(y)")
	fs.Float64Var(&f.copyCorr, "copy", 0, "semi: also plant a null correlated with the data: a noisy copy of the feature most correlated with the response, with this `correlation` to it (0: none)")
	fs.IntVar(&f.reps, "reps", 100, "number of repetitions (data sets)")
	fs.IntVar(&f.n, "n", 0, "rows per data set (0: 2000 for linear, 1000 for binary, as the paper's experiments)")
	fs.Float64Var(&f.rho, "rho", math.NaN(), "Corr(x1, x2) of the linear setting (default 0.5)")
	fs.StringVar(&f.estimators, "estimators", "lazy", "comma-separated estimators")
	// The cross-fitted and repeated candidates' folds and repetitions are
	// by default those of vi estimate's default inference.
	fs.IntVar(&f.crossfit, "crossfit", lazyvi.DefaultCrossFit, "cross-fitting `folds` of the cross-fitted candidates (at least 2)")
	fs.IntVar(&f.repeats, "repeats", lazyvi.DefaultRepeats, "repetitions of the cross-fit for the repeated candidates (1: none)")
	fs.StringVar(&f.perturb, "perturb", strconv.FormatFloat(inference.DefaultPerturb, 'g', -1, 64), "comma-separated `rhos` of the perturbed candidates")
	fs.IntVar(&f.lazyFolds, "folds", 0, "cross-validation folds for lazy's ridge penalty (0: the framework's default)")
	fs.StringVar(&f.hidden, "hidden", "", "hidden widths of the MLP (backend default when empty; auto: chosen among vi estimate's candidates)")
	fs.BoolVar(&f.choose, "choose", true, "choose each data set's full model as vi estimate does: the MLP only where it beats the linear model by more than the standard error of the difference in cross-validated loss (false: always the MLP)")
	fs.Float64Var(&f.level, "level", inference.DefaultLevel, "level of the intervals")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "repetitions run concurrently")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the first repetition; repetition r uses seed+r")
}

// Config checks the flags and returns the study they ask for; with
// --setting semi it reads --data. A bad flag is a usage error
// (framework.ErrUsage) that names it.
func (f *Flags) Config(ctx context.Context) (Config, error) {
	c := Config{Setting: f.setting, N: f.n, Rho: f.rho, Target: f.target, Signal: f.signal, Copy: f.copyCorr,
		Reps: f.reps, CrossFit: f.crossfit, Repeats: f.repeats, Level: f.level, Workers: f.workers, Seed: f.seed}
	if f.reps < 1 || f.workers < 1 || f.crossfit < 2 || f.repeats < 1 {
		return c, framework.Usagef("bench coverage: --reps, --workers and --repeats must be positive and --crossfit at least 2")
	}
	if !(f.level > 0 && f.level < 1) {
		return c, framework.Usagef("--level must be in (0, 1), got %g", f.level)
	}
	var err error
	if c.Perturb, err = floatList(f.perturb, "--perturb", inference.MaxPerturb); err != nil {
		return c, err
	}
	if c.Data, err = f.semiData(ctx); err != nil {
		return c, err
	}
	if c.Estimators, err = pipeline.LookupEstimators(f.estimators); err != nil {
		return c, err
	}
	if f.lazyFolds != 0 {
		if c.Estimators, err = pipeline.ConfigureEstimators(c.Estimators, map[string]string{"folds": strconv.Itoa(f.lazyFolds)}); err != nil {
			return c, err
		}
	}
	if c.Backend, err = framework.LookupBackend("mlp"); err != nil {
		return c, err
	}
	c.Options = map[string]string{}
	switch f.hidden {
	case "":
	case "auto":
		var def pipeline.Config
		lazyvi.FullModelDefaults(&def, "mlp", true)
		c.Candidates = def.Candidates
	default:
		c.Options["hidden"] = f.hidden
	}
	if f.choose {
		c.Rivals = []pipeline.Baseline{lazyvi.LinearModel()}
	}
	return c, nil
}

// semiData checks the flags of the setting and, for semi, reads --data
// (nil for a simulated setting).
func (f *Flags) semiData(ctx context.Context) (*dataio.Dataset, error) {
	switch f.setting {
	case "linear", "binary":
		if f.data != "" || f.target != "" || f.copyCorr != 0 {
			return nil, framework.Usagef("bench coverage: --data, --target and --copy are for --setting semi")
		}
		return nil, nil
	case "semi":
		if f.n != 0 || !math.IsNaN(f.rho) {
			return nil, framework.Usagef("bench coverage: --n and --rho are for the simulated settings; semi uses every row of --data")
		}
		if !(f.signal > 0) || math.IsInf(f.signal, 0) {
			return nil, framework.Usagef("bench coverage: --signal must be a positive share of the response's variance, got %g", f.signal)
		}
		if !(f.copyCorr >= 0 && f.copyCorr < 1) {
			return nil, framework.Usagef("bench coverage: --copy must be a correlation in [0, 1), got %g", f.copyCorr)
		}
		if f.data == "" {
			return lazyvi.Diabetes()
		}
		return dataio.LoadCSV(ctx, f.data)
	}
	return nil, framework.Usagef("bench coverage: --setting must be linear, binary or semi (a setting with a known truth), got %q", f.setting)
}

// floatList parses a comma-separated list of numbers in (0, most].
func floatList(s, flagName string, most float64) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0 && v <= most) {
			return nil, framework.Usagef("%s: want numbers in (0, %g], got %q", flagName, most, f)
		}
		out = append(out, v)
	}
	return out, nil
}
