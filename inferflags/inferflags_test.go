package inferflags

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// parse registers the flags on a new flag set, parses args and returns the
// flags and the names of those given.
func parse(t *testing.T, args ...string) (*Flags, map[string]bool) {
	t.Helper()
	var f Flags
	fs := flag.NewFlagSet("estimate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs)
	fs.Float64("train-frac", 0.5, "") // a flag of the command's, which the rule reads
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return &f, set
}

// options runs the three checks in order on args, with --train-frac 0.5.
func options(t *testing.T, s Setting, args ...string) (*Flags, inference.InferOptions, error) {
	t.Helper()
	f, set := parse(t, args...)
	if err := f.Parse(); err != nil {
		return f, inference.InferOptions{}, err
	}
	s.TrainFrac = 0.5
	if err := f.Defaults(set, s); err != nil {
		return f, inference.InferOptions{}, err
	}
	o, err := f.Options(set, 0.9)
	return f, o, err
}

// TestDefault: no flag is vi's default inference, the paired estimate of
// an ensemble of lazyvi.DefaultRepeats cross-fits of DefaultCrossFit
// folds, debiased, with the directed bias bound and the score-based upper
// end; one split asked for (--repeats 1, --crossfit 0, --train-frac) is
// split inference without them.
func TestDefault(t *testing.T) {
	f, o, err := options(t, Setting{})
	if err != nil {
		t.Fatal(err)
	}
	want := inference.InferOptions{Inference: inference.Plain, Level: 0.9, Perturb: inference.DefaultPerturb, Ensemble: true,
		Debias: true, BiasAware: true, DirectedBias: true, ScoreUpper: true, Test: inference.TestCovariance}
	if o != want || f.CrossFit != lazyvi.DefaultCrossFit || f.Repeats != lazyvi.DefaultRepeats {
		t.Errorf("default: %+v, crossfit %d, repeats %d; want %+v, %d, %d", o, f.CrossFit, f.Repeats, want, lazyvi.DefaultCrossFit, lazyvi.DefaultRepeats)
	}
	for _, args := range [][]string{{"--repeats", "1"}, {"--crossfit", "0"}, {"--train-frac", "0.7"}} {
		f, o, err := options(t, Setting{}, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if o.Inference != inference.Split || o.Ensemble || o.Debias || o.BiasAware || o.ScoreUpper || f.Repeats != 1 {
			t.Errorf("%v: %+v, repeats %d; want one split with split inference", args, o, f.Repeats)
		}
	}
	if _, o, err := options(t, Setting{Pretrained: true}); err != nil || o.Ensemble || o.Inference != inference.Split {
		t.Errorf("pretrained: %+v, %v; want one split, not ensembled", o, err)
	}
}

// TestGiven: flags given are kept, and the default's counts follow
// --crossfit and --repeats given alone.
func TestGiven(t *testing.T) {
	f, o, err := options(t, Setting{}, "--crossfit", "5", "--inference", "perturbed", "--bias-two-sided", "--delta", "0.1", "--adjust", "holm", "--test", "estimate", "--ci-truncate")
	if err != nil {
		t.Fatal(err)
	}
	if f.CrossFit != 5 || f.Repeats != lazyvi.DefaultRepeats || o.Inference != inference.Perturbed || !o.BiasAware || o.DirectedBias ||
		o.Delta != 0.1 || o.Adjust != inference.AdjustHolm || o.Test != inference.TestEstimate || !o.CITruncate {
		t.Errorf("crossfit %d repeats %d %+v", f.CrossFit, f.Repeats, o)
	}
}

// TestRefused: each combination the flags refuse is a usage error that
// names the flags.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		s    Setting
		want string
	}{
		{[]string{"--inference", "nonsense"}, Setting{}, "nonsense"},
		{[]string{"--crossfit", "1"}, Setting{}, "--crossfit must be 0"},
		{[]string{"--delta", "NaN"}, Setting{}, "--delta must be a finite number"},
		{[]string{"--repeats", "0", "--ensemble=false"}, Setting{}, "--repeats must be at least 1"},
		{[]string{"--perturb", "0"}, Setting{}, "--perturb must be in (0, 100]"},
		{[]string{"--perturb", "101"}, Setting{}, "--perturb must be in (0, 100]"},
		{[]string{"--ensemble", "--train-frac", "0.7"}, Setting{}, "--ensemble and --train-frac exclude each other"},
		{[]string{"--crossfit", "3", "--train-frac", "0.7", "--ensemble=false"}, Setting{}, "--train-frac and --crossfit exclude each other"},
		{[]string{"--ensemble", "--crossfit", "0", "--repeats", "3"}, Setting{Model: "m.vimodel"}, "m.vimodel holds 3 repetitions of one train/evaluation split's model"},
		{[]string{"--repeats", "1", "--bias-two-sided"}, Setting{}, "--bias-two-sided goes with --bias-aware"},
		{[]string{"--repeats", "1", "--score-upper"}, Setting{}, "--score-upper needs the paired estimate"},
		{[]string{"--inference", "split", "--debias"}, Setting{}, "--debias and --bias-aware need the ensemble"},
	} {
		_, _, err := options(t, c.s, c.args...)
		if err == nil || !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}

// TestCountDefaults: the counts the library's rule gives for the flags
// given, and whether it ensembles.
func TestCountDefaults(t *testing.T) {
	for _, c := range []struct {
		set               map[string]bool
		evalGiven         bool
		crossfit, repeats int
		wantCF, wantR     int
		wantEnsemble      bool
	}{
		{map[string]bool{}, false, 0, 1, lazyvi.DefaultCrossFit, lazyvi.DefaultRepeats, true},
		{map[string]bool{"repeats": true}, false, 0, 1, 0, 1, false},
		{map[string]bool{"crossfit": true}, false, 0, 1, 1, 0, false},
		{map[string]bool{"repeats": true}, false, 0, 5, lazyvi.DefaultCrossFit, 5, true},
		{map[string]bool{}, true, 0, 1, 0, lazyvi.DefaultRepeats, true},
	} {
		cfg, ens := CountDefaults(c.set, c.evalGiven, 0.5, c.crossfit, c.repeats)
		if cfg.CrossFit != c.wantCF || cfg.Repeats != c.wantR || ens != c.wantEnsemble {
			t.Errorf("%v eval %v: crossfit %d repeats %d ensemble %v, want %d %d %v", c.set, c.evalGiven, cfg.CrossFit, cfg.Repeats, ens, c.wantCF, c.wantR, c.wantEnsemble)
		}
	}
}
