package inferflags

import (
	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// Setting is what the inference's defaults depend on besides the
// inference flags.
type Setting struct {
	EvalGiven  bool    // --eval-data or --split-column
	Pretrained bool    // a network loaded with --opt weights=
	TrainFrac  float64 // --train-frac
	Model      string  // --model
}

// Defaults sets --ensemble, --crossfit and --repeats where the flags leave
// them to vi's default inference, by the library's rule
// (lazyvi.InferenceDefaults) on the settings the flags give (set: the
// names of the flags given; a model file's counts among them): unless a
// flag asks for one split or one seed (--train-frac, --crossfit 0,
// --repeats 1), the cross-fit is repeated and its predictions ensembled,
// lazyvi.DefaultCrossFit folds and DefaultRepeats repetitions unless
// given. --ensemble=false keeps the counts given.
func (f *Flags) Defaults(set map[string]bool, s Setting) error {
	if set["ensemble"] && !f.Ensemble {
		return nil
	}
	if s.Pretrained {
		f.Ensemble = false // one loaded network, judged once (InferenceDefaults)
		return nil
	}
	cfg, ensemble := CountDefaults(set, s.EvalGiven, s.TrainFrac, f.CrossFit, f.Repeats)
	if f.Ensemble = ensemble; !f.Ensemble {
		return nil
	}
	// --ensemble alone is the setting vi bench coverage studies. What
	// excludes it says so in terms of the flags given.
	switch {
	case set["train-frac"] && !set["crossfit"]:
		return framework.Usagef("--ensemble and --train-frac exclude each other (--ensemble cross-fits: every fold is evaluated in turn)")
	case s.Model != "" && (f.CrossFit < 2 && !s.EvalGiven || f.Repeats < 2):
		return framework.Usagef("--ensemble needs a model file of repeated cross-fits (vi train's default); %s holds %s", s.Model, dataio.CountsString(f.CrossFit, f.Repeats))
	}
	if !set["crossfit"] {
		f.CrossFit = cfg.CrossFit
	}
	if !set["repeats"] {
		f.Repeats = cfg.Repeats
	}
	return nil
}

// CountDefaults applies the library's rule (lazyvi.InferenceDefaults) to
// the counts the flags give (set: the names of the flags given;
// --crossfit 0, one split, is the library's CrossFit 1): it returns the
// configuration with the counts it defaults, and whether to ensemble.
// With evalGiven the rule asks only whether the evaluation rows are
// given; their folds are the partition's.
func CountDefaults(set map[string]bool, evalGiven bool, trainFrac float64, crossfit, repeats int) (pipeline.Config, bool) {
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
