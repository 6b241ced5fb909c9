package main

import (
	"flag"
	"math"
	"strings"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// inferenceFlags are vi estimate's inference flags: the split or
// cross-fit and its repetitions, and how the standard errors, intervals
// and p-values are computed from them.
type inferenceFlags struct {
	inference  string
	crossfit   int
	repeats    int
	perturb    float64
	ensemble   bool
	debias     bool
	biasAware  bool
	twoSided   bool
	scoreUpper bool
	delta      float64
	test       string
	adjust     string
	ciTruncate bool

	// parse's results: --inference auto, or its method; --test's and
	// --adjust's.
	auto       bool
	method     inference.Inference
	testKind   inference.Test
	adjustment inference.Adjust
}

func (f *inferenceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.inference, "inference", "auto", "`inference`: split (full and reduced models scored on different halves), plain (both on the same rows: the paired estimate) or perturbed (paired, with seeded noise); auto: plain with --debias on the ensemble, else split")
	fs.IntVar(&f.crossfit, "crossfit", 0, "cross-fit with `K` folds (0: one train/evaluation split, --train-frac; 3 with --ensemble, the default)")
	fs.IntVar(&f.repeats, "repeats", 1, "repeat the split or cross-fit `M` times with other seeds and combine them (1: once; 3 with --ensemble, the default)")
	fs.BoolVar(&f.ensemble, "ensemble", true, "average each row's out-of-fold predictions (every model's; permute's estimates instead) over the repetitions of the cross-fit and infer once from the averages (--crossfit 3 --repeats 3 unless given); on unless --train-frac, --crossfit 0 or --repeats 1 is given (or a --model of one split or one repetition)")
	fs.BoolVar(&f.debias, "debias", true, "extrapolate the ensemble's paired estimate (plain or perturbed) to infinitely many repetitions, from the difference between the ensemble's estimate and the repetitions' own; on for them unless --debias=false")
	fs.BoolVar(&f.scoreUpper, "score-upper", true, "with the paired estimate (plain or perturbed) and mse or r2, take each interval's upper end from the standard error the estimate would have there (it grows with the VI); on for them unless --score-upper=false, which gives the symmetric interval")
	fs.BoolVar(&f.biasAware, "bias-aware", true, "widen each interval by a bound on the ensemble's remaining bias (the size of --debias's correction), on the side the correction came from, and take the p-value that agrees with it; on with --debias unless --bias-aware=false")
	fs.BoolVar(&f.twoSided, "bias-two-sided", false, "with --bias-aware, widen both ends of each interval by the bound")
	fs.Float64Var(&f.perturb, "perturb", inference.DefaultPerturb, "perturbed inference: the noise's sd `rho` in units of the full model's influence sd (lazy's and lazy-es's: their baseline's)")
	fs.Float64Var(&f.delta, "delta", 0, "p_value tests H0: VI <= `delta`")
	fs.StringVar(&f.test, "test", "covariance", "where p_value comes from: `test` estimate (the VI estimate's own test, which agrees with its interval) or covariance (for cpi, whose reduced model is the full model's conditional mean: a test of H0 VI = 0 by the covariance between the reduced model's residual and the full model's departure from it, with more power; with the paired estimate, mse, r2 or logloss and --delta 0; other estimators keep estimate)")
	fs.StringVar(&f.adjust, "adjust", "none", "adjust each estimator's p-values: `method` holm, bh or none")
	fs.BoolVar(&f.ciTruncate, "ci-truncate", false, "floor the intervals at 0")
}

// parse checks what needs nothing else: --inference, --adjust, --test,
// --delta and --crossfit.
func (f *inferenceFlags) parse() error {
	f.auto = strings.EqualFold(strings.TrimSpace(f.inference), "auto")
	f.method = inference.Split
	var err error
	if !f.auto {
		if f.method, err = inference.ParseInference(f.inference); err != nil {
			return err
		}
	}
	if f.adjustment, err = inference.ParseAdjust(f.adjust); err != nil {
		return err
	}
	if f.testKind, err = inference.ParseTest(f.test); err != nil {
		return err
	}
	if math.IsNaN(f.delta) || math.IsInf(f.delta, 0) {
		return framework.Usagef("--delta must be a finite number, got %g", f.delta)
	}
	if f.crossfit < 0 || f.crossfit == 1 {
		return framework.Usagef("--crossfit must be 0 (no cross-fitting) or at least 2, got %d", f.crossfit)
	}
	return nil
}

// inferenceSetting is what the inference's defaults depend on besides
// the inference flags.
type inferenceSetting struct {
	evalGiven  bool    // --eval-data or --split-column
	pretrained bool    // a network loaded with --opt weights=
	trainFrac  float64 // --train-frac
	model      string  // --model
}

// defaults sets --ensemble, --crossfit and --repeats where the flags
// leave them to vi's default inference, by the library's rule
// (lazyvi.InferenceDefaults) on the settings the flags give (set; a model
// file's counts among them, modelCounts): unless a flag asks for one split
// or one seed (--train-frac, --crossfit 0, --repeats 1), the cross-fit is
// repeated and its predictions ensembled, lazyvi.DefaultCrossFit folds and
// DefaultRepeats repetitions unless given. --ensemble=false keeps the
// counts given.
func (f *inferenceFlags) defaults(set map[string]bool, s inferenceSetting) error {
	if set["ensemble"] && !f.ensemble {
		return nil
	}
	if s.pretrained {
		f.ensemble = false // one loaded network, judged once (InferenceDefaults)
		return nil
	}
	cfg, ensemble := countDefaults(set, s.evalGiven, s.trainFrac, f.crossfit, f.repeats)
	if f.ensemble = ensemble; !f.ensemble {
		return nil
	}
	// --ensemble alone is the setting vi bench coverage studies. What
	// excludes it says so in terms of the flags given.
	switch {
	case set["train-frac"] && !set["crossfit"]:
		return framework.Usagef("--ensemble and --train-frac exclude each other (--ensemble cross-fits: every fold is evaluated in turn)")
	case s.model != "" && (f.crossfit < 2 && !s.evalGiven || f.repeats < 2):
		return framework.Usagef("--ensemble needs a model file of repeated cross-fits (vi train's default); %s holds %s", s.model, modelCountsString(f.crossfit, f.repeats))
	}
	if !set["crossfit"] {
		f.crossfit = cfg.CrossFit
	}
	if !set["repeats"] {
		f.repeats = cfg.Repeats
	}
	return nil
}

// countDefaults applies the library's rule (lazyvi.InferenceDefaults) to
// the counts the flags give (set; --crossfit 0, one split, is the
// library's CrossFit 1): it returns the configuration with the counts it
// defaults, and whether to ensemble. With evalGiven the rule asks only
// whether the evaluation rows are given; their folds are the partition's.
func countDefaults(set map[string]bool, evalGiven bool, trainFrac float64, crossfit, repeats int) (pipeline.Config, bool) {
	var cfg pipeline.Config
	if evalGiven {
		cfg.Partition = []int{}
	}
	var opt pipeline.EstimateOptions
	opt.Ensemble = set["ensemble"]
	if set["train-frac"] {
		cfg.TrainFrac = trainFrac
	}
	if set["crossfit"] {
		cfg.CrossFit = max(crossfit, 1)
	}
	if set["repeats"] {
		cfg.Repeats = repeats
	}
	lazyvi.InferenceDefaults(&cfg, &opt)
	return cfg, opt.Ensemble
}

// options checks the flags against each other, once the defaults are
// set, and returns the inference options they give at level.
func (f *inferenceFlags) options(set map[string]bool, level float64) (inference.InferOptions, error) {
	if f.crossfit >= 2 && set["train-frac"] {
		return inference.InferOptions{}, framework.Usagef("--train-frac and --crossfit exclude each other (cross-fitting evaluates every fold in turn)")
	}
	if f.repeats < 1 {
		return inference.InferOptions{}, framework.Usagef("--repeats must be at least 1, got %d", f.repeats)
	}
	if !(f.perturb > 0) || math.IsInf(f.perturb, 0) {
		return inference.InferOptions{}, framework.Usagef("--perturb must be a positive number, got %g", f.perturb)
	}
	method := f.method
	if f.auto && f.ensemble {
		method = inference.Plain // lazyvi.EnsembleDefault's
	}
	paired := f.ensemble && method != inference.Split
	if !set["debias"] {
		f.debias = paired
	}
	if !set["bias-aware"] {
		f.biasAware = f.debias
	}
	if f.twoSided && !f.biasAware {
		return inference.InferOptions{}, framework.Usagef("--bias-two-sided goes with --bias-aware")
	}
	if !set["score-upper"] {
		f.scoreUpper = method != inference.Split
	}
	if f.scoreUpper && method == inference.Split {
		return inference.InferOptions{}, framework.Usagef("--score-upper needs the paired estimate (--inference plain or perturbed, or auto on the ensemble)")
	}
	if (f.debias || f.biasAware) && !paired {
		return inference.InferOptions{}, framework.Usagef("--debias and --bias-aware need the ensemble (--ensemble, the default) with --inference plain or perturbed: they correct the paired estimate of averaged predictions")
	}
	return inference.InferOptions{
		Inference:    method,
		Level:        level,
		Perturb:      f.perturb,
		Ensemble:     f.ensemble,
		Debias:       f.debias,
		BiasAware:    f.biasAware,
		DirectedBias: f.biasAware && !f.twoSided,
		ScoreUpper:   f.scoreUpper,
		Delta:        f.delta,
		Test:         f.testKind,
		Adjust:       f.adjustment,
		CITruncate:   f.ciTruncate,
	}, nil
}
