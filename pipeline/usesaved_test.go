package pipeline

import (
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
)

// TestUseSaved: the seed, folds and train share not given are the
// model's, cfg.Saved is the model, and one given with another value is
// refused naming the flag.
func TestUseSaved(t *testing.T) {
	m := &dataio.SavedModel{Source: "m.vimodel", Seed: 7, TrainFrac: 0.8}
	cfg := Config{Seed: 1, TrainFrac: 0.5}
	crossfit := 3
	if err := UseSaved(&cfg, &crossfit, m, map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if cfg.Seed != 7 || cfg.TrainFrac != 0.8 || crossfit != 0 || cfg.Saved != m {
		t.Errorf("seed %d train-frac %g crossfit %d saved %v, want the model's", cfg.Seed, cfg.TrainFrac, crossfit, cfg.Saved == m)
	}
	for _, c := range []struct {
		flag     string
		seed     int64
		frac     float64
		crossfit int
		want     string
	}{
		{"seed", 2, 0.8, 0, "--seed 2 differs from the model's 7 (m.vimodel)"},
		{"crossfit", 7, 0.8, 5, "--crossfit 5 differs from the model's 0"},
		{"train-frac", 7, 0.6, 0, "--train-frac 0.6 differs from the model's 0.8"},
	} {
		cfg := Config{Seed: c.seed, TrainFrac: c.frac}
		crossfit := c.crossfit
		if err := UseSaved(&cfg, &crossfit, m, map[string]bool{c.flag: true}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--%s: %v, want %q", c.flag, err, c.want)
		}
	}
}
