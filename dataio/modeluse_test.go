package dataio

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestUsePrepare: the preparation flags not given take the model's, those
// given with the model's values are kept, and one given with another value
// is a usage error naming the flag, both values and the file.
func TestUsePrepare(t *testing.T) {
	m := &SavedModel{Source: "m.vimodel", Prepare: &PrepareOptions{Features: []string{"a", "b"}, Drop: []string{"id"}, Missing: MissingImpute}}
	var p PrepareOptions
	if err := m.UsePrepare(&p, map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Features, []string{"a", "b"}) || !slices.Equal(p.Drop, []string{"id"}) || p.Categorical != nil || p.Missing != MissingImpute {
		t.Errorf("nothing given: %+v, want the model's", p)
	}
	p = PrepareOptions{Features: []string{"a", "b"}, Missing: MissingImpute}
	if err := m.UsePrepare(&p, map[string]bool{"features": true, "missing": true}); err != nil {
		t.Errorf("the model's values given: %v", err)
	}
	for _, c := range []struct {
		p    PrepareOptions
		set  string
		want string
	}{
		{PrepareOptions{Features: []string{"a"}}, "features", "--features a differs from the model's a,b (m.vimodel); leave --features out"},
		{PrepareOptions{Missing: MissingDrop}, "missing", "--missing drop differs from the model's impute"},
	} {
		err := m.UsePrepare(&c.p, map[string]bool{c.set: true})
		if err == nil || !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--%s: %v, want a usage error with %q", c.set, err, c.want)
		}
	}
}

// TestUseCounts: the model's folds and repetitions become the run's and
// count as given; other values given, or another train share for a model
// of one split, are refused.
func TestUseCounts(t *testing.T) {
	m := &SavedModel{Source: "m.vimodel", CrossFit: 3, Repeats: 2, TrainFrac: 0.8}
	crossfit, repeats := 0, 1
	counts, err := m.UseCounts(&crossfit, &repeats, 0.5, map[string]bool{"seed": true})
	if err != nil || crossfit != 3 || repeats != 2 || !counts["crossfit"] || !counts["repeats"] || !counts["seed"] {
		t.Errorf("crossfit %d repeats %d counts %v, %v; want 3 2 with crossfit, repeats and seed", crossfit, repeats, counts, err)
	}
	if _, err := m.UseCounts(&crossfit, &repeats, 0.5, map[string]bool{"train-frac": true}); err != nil {
		t.Errorf("--train-frac with a cross-fit's model: %v, want it ignored", err)
	}
	repeats = 5
	if _, err := m.UseCounts(&crossfit, &repeats, 0.5, map[string]bool{"repeats": true}); err == nil || !strings.Contains(err.Error(), "--repeats 5 differs from the model's 2") {
		t.Errorf("--repeats 5: %v", err)
	}
	split := &SavedModel{Source: "s.vimodel", TrainFrac: 0.8}
	if _, err := split.UseCounts(&crossfit, &repeats, 0.5, map[string]bool{"train-frac": true}); err == nil || !strings.Contains(err.Error(), "--train-frac 0.5 differs from the model's 0.8") {
		t.Errorf("--train-frac 0.5 on a split's model: %v", err)
	}
}
