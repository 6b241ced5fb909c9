package coverage

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/framework"
)

// config registers the study's flags on a new flag set, parses args and
// returns the study they ask for.
func config(t *testing.T, args ...string) (Config, error) {
	t.Helper()
	var f Flags
	fs := flag.NewFlagSet("bench coverage", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return f.Config(context.Background())
}

// TestFlagsConfig: the defaults are vi estimate's counts, the linear
// setting, lazy on the in-process mlp and the linear model as the rival;
// --hidden auto gives vi estimate's candidate architectures, --choose=false
// no rival, --setting semi the built-in data without --data.
func TestFlagsConfig(t *testing.T) {
	c, err := config(t)
	if err != nil {
		t.Fatal(err)
	}
	if c.Setting != "linear" || c.Reps != 100 || c.CrossFit != lazyvi.DefaultCrossFit || c.Repeats != lazyvi.DefaultRepeats ||
		len(c.Estimators) != 1 || c.Estimators[0].Name() != "lazy" || c.Backend == nil || len(c.Rivals) != 1 || c.Data != nil || len(c.Perturb) != 1 {
		t.Errorf("defaults: %+v", c)
	}
	c, err = config(t, "--hidden", "auto", "--choose=false", "--perturb", "0.5,1", "--setting", "semi")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Candidates) == 0 || c.Rivals != nil || len(c.Perturb) != 2 || c.Data == nil || c.Options["hidden"] != "" {
		t.Errorf("--hidden auto --choose=false --perturb 0.5,1 --setting semi: %+v", c)
	}
	if c, err := config(t, "--hidden", "20,10"); err != nil || c.Options["hidden"] != "20,10" {
		t.Errorf("--hidden 20,10: options %v, %v", c.Options, err)
	}
}

// TestFlagsRefused: each bad flag is a usage error that names it.
func TestFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--crossfit", "1"}, "--crossfit at least 2"},
		{[]string{"--level", "1"}, "--level must be in (0, 1)"},
		{[]string{"--perturb", "0.5,-1"}, `--perturb: want numbers in (0, 100], got "-1"`},
		{[]string{"--perturb", "200"}, `--perturb: want numbers in (0, 100], got "200"`},
		{[]string{"--copy", "0.5"}, "--copy are for --setting semi"},
		{[]string{"--setting", "semi", "--n", "100"}, "--n and --rho are for the simulated settings"},
		{[]string{"--setting", "semi", "--signal", "0"}, "--signal must be a positive share"},
		{[]string{"--setting", "semi", "--copy", "1"}, "--copy must be a correlation in [0, 1)"},
		{[]string{"--setting", "other"}, `--setting must be linear, binary or semi`},
		{[]string{"--estimators", "nonsense"}, "nonsense"},
	} {
		_, err := config(t, c.args...)
		if err == nil || !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}
