package coverage

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
)

// TestCounts: counts a study cannot mean are usage errors before any
// repetition runs (--reps 1e9 grew past 2 GB, --repeats 1e9 past 9 GB),
// and a worker count far above the repetitions starts a goroutine per
// repetition at most (--workers 1e9 took 22 GB).
func TestCounts(t *testing.T) {
	base := Config{Setting: "linear", N: 120, Reps: 2, Estimators: []framework.Estimator{estimators.Dropout{}}, CrossFit: 2, Repeats: 1,
		Perturb: []float64{0.5}, Backend: linear.Backend{}, Level: 0.9, Workers: 1, Seed: 1}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Reps = 1e9 }, "1000000000 repetitions: at most 100000"},
		{func(c *Config) { c.Repeats = 1e9 }, "1000000000 repeats of the cross-fit: at most 1000"},
	} {
		cfg := base
		c.edit(&cfg)
		if _, err := Run(context.Background(), cfg); !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want a usage error with %q", err, c.want)
		}
	}
	cfg := base
	cfg.Workers = 100000
	before, peak := runtime.NumGoroutine(), 0
	cfg.Progress = func(int, int) { peak = max(peak, runtime.NumGoroutine()) }
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if peak > before+50 {
		t.Errorf("%d goroutines with 100000 workers for 2 repetitions (%d before)", peak, before)
	}
}
