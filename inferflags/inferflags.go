// Package inferflags is vi estimate's inference flags as a group that a Go
// command can register on its own flag.FlagSet: the split or cross-fit and
// its repetitions, and how the standard errors, intervals and p-values are
// computed from them. Register defines them; Parse, Defaults and Options
// check them in that order and give the inference.InferOptions they say,
// with vi's defaults (lazyvi.InferenceDefaults) where they are not given.
package inferflags

import (
	"flag"
	"math"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// Flags are the inference flags' values. Their names are the flags'.
type Flags struct {
	Inference  string
	CrossFit   int
	Repeats    int
	Perturb    float64
	Ensemble   bool
	Debias     bool
	BiasAware  bool
	TwoSided   bool
	ScoreUpper bool
	Delta      float64
	Test       string
	Adjust     string
	CITruncate bool

	// Parse's results: --inference auto, or its method; --test's and
	// --adjust's.
	auto       bool
	method     inference.Inference
	testKind   inference.Test
	adjustment inference.Adjust
}

// Register defines the inference flags on fs with vi's defaults.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Inference, "inference", "auto", "`inference`: split (full and reduced models scored on different halves), plain (both on the same rows: the paired estimate) or perturbed (paired, with seeded noise); auto: plain with --debias on the ensemble, else split")
	fs.IntVar(&f.CrossFit, "crossfit", 0, "cross-fit with `K` folds (0: one train/evaluation split, --train-frac; 3 with --ensemble, the default)")
	fs.IntVar(&f.Repeats, "repeats", 1, "repeat the split or cross-fit `M` times with other seeds and combine them (1: once; 3 with --ensemble, the default)")
	fs.BoolVar(&f.Ensemble, "ensemble", true, "average each row's out-of-fold predictions (every model's; permute's estimates instead) over the repetitions of the cross-fit and infer once from the averages (--crossfit 3 --repeats 3 unless given); on unless --train-frac, --crossfit 0 or --repeats 1 is given (or a --model of one split or one repetition)")
	fs.BoolVar(&f.Debias, "debias", true, "extrapolate the ensemble's paired estimate (plain or perturbed) to infinitely many repetitions, from the difference between the ensemble's estimate and the repetitions' own; on for them unless --debias=false")
	fs.BoolVar(&f.ScoreUpper, "score-upper", true, "with the paired estimate (plain or perturbed) and mse or r2, take each interval's upper end from the standard error the estimate would have there (it grows with the VI); on for them unless --score-upper=false, which gives the symmetric interval")
	fs.BoolVar(&f.BiasAware, "bias-aware", true, "widen each interval by a bound on the ensemble's remaining bias (the size of --debias's correction), on the side the correction came from, and take the p-value that agrees with it; on with --debias unless --bias-aware=false")
	fs.BoolVar(&f.TwoSided, "bias-two-sided", false, "with --bias-aware, widen both ends of each interval by the bound")
	fs.Float64Var(&f.Perturb, "perturb", inference.DefaultPerturb, "perturbed inference: the noise's sd `rho` in units of the full model's influence sd (lazy's and lazy-es's: their baseline's)")
	fs.Float64Var(&f.Delta, "delta", 0, "p_value tests H0: VI <= `delta`")
	fs.StringVar(&f.Test, "test", "covariance", "where p_value comes from: `test` estimate (the VI estimate's own test, which agrees with its interval) or covariance (for cpi, whose reduced model is the full model's conditional mean: a test of H0 VI = 0 by the covariance between the reduced model's residual and the full model's departure from it, with more power; with the paired estimate, mse, r2 or logloss and --delta 0; other estimators keep estimate)")
	fs.StringVar(&f.Adjust, "adjust", "none", "adjust each estimator's p-values: `method` holm, bh or none")
	fs.BoolVar(&f.CITruncate, "ci-truncate", false, "floor the intervals at 0")
}

// Parse checks what needs nothing else: --inference, --adjust, --test,
// --delta and --crossfit.
func (f *Flags) Parse() error {
	f.auto = strings.EqualFold(strings.TrimSpace(f.Inference), "auto")
	f.method = inference.Split
	var err error
	if !f.auto {
		if f.method, err = inference.ParseInference(f.Inference); err != nil {
			return err
		}
	}
	if f.adjustment, err = inference.ParseAdjust(f.Adjust); err != nil {
		return err
	}
	if f.testKind, err = inference.ParseTest(f.Test); err != nil {
		return err
	}
	if math.IsNaN(f.Delta) || math.IsInf(f.Delta, 0) {
		return framework.Usagef("--delta must be a finite number, got %g", f.Delta)
	}
	if f.CrossFit < 0 || f.CrossFit == 1 {
		return framework.Usagef("--crossfit must be 0 (no cross-fitting) or at least 2, got %d", f.CrossFit)
	}
	return nil
}
