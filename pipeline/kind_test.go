package pipeline_test

import (
	"context"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// countBackend is reportBackend counting the models it makes.
type countBackend struct {
	reportBackend
	made *atomic.Int32
}

func (b countBackend) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	b.made.Add(1)
	return b.reportBackend.New(ctx, spec)
}

// TestRunChoosesKind: the backend's model is kept only when its
// cross-validated loss beats the rival's by more than the standard error
// of the difference (a tie goes to the rival); the rival chosen is the full
// model of every repetition and the run's backend, and is no baseline of
// itself; a rival not chosen is the baseline of the same name without
// being fitted again.
func TestRunChoosesKind(t *testing.T) {
	d := dataset(300, 6)
	ctx := context.Background()
	for _, c := range []struct {
		own, rival, want string
	}{
		{"6", "0", "main"}, // the truth's slope on the standardised column is 6
		{"0", "6", "rival"},
		{"6", "6", "rival"},
	} {
		var ownMade, rivalMade atomic.Int32
		rb := countBackend{made: &rivalMade}
		rival := pipeline.Baseline{Name: "rival", Backend: rb, Options: map[string]string{"slope": c.rival}}
		cfg := pipeline.Config{Backend: countBackend{made: &ownMade}, BackendName: "main", Seed: 3, CrossFit: 3, Repeats: 2,
			Options: map[string]string{"slope": c.own}, Rivals: []pipeline.Baseline{rival}, Baselines: []pipeline.Baseline{rival}}
		rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), []framework.Estimator{shift{0}}, pipeline.EstimateOptions{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		ch := rep.Full.Choice
		if ch == nil || ch.Chosen != c.want || rep.Backend != c.want || ch.Measure != "mse" || len(ch.Kinds) != 2 {
			t.Fatalf("slopes %s vs %s: choice %+v, backend %q; want %s", c.own, c.rival, ch, rep.Backend, c.want)
		}
		own, riv := ch.Kinds[0], ch.Kinds[1]
		if own.Name != "main" || riv.Name != "rival" || !scalar.EqualWithinAbs(riv.Diff, riv.Loss-own.Loss, 1e-9) {
			t.Errorf("slopes %s vs %s: kinds %+v", c.own, c.rival, ch.Kinds)
		}
		if kept := riv.Diff > riv.DiffSE; kept != (c.want == "main") {
			t.Errorf("slopes %s vs %s: difference %g, se %g, but chose %s", c.own, c.rival, riv.Diff, riv.DiffSE, c.want)
		}
		// The first repetition fits both kinds on its 3 folds; the
		// second only the chosen one.
		wantOwn, wantRival := int32(3), int32(3)
		names := []string{pipeline.InterceptName, "rival"}
		if c.want == "main" {
			wantOwn += 3
		} else {
			wantRival += 3
			names = names[:1]
		}
		if ownMade.Load() != wantOwn || rivalMade.Load() != wantRival {
			t.Errorf("slopes %s vs %s: made %d and %d models, want %d and %d", c.own, c.rival, ownMade.Load(), rivalMade.Load(), wantOwn, wantRival)
		}
		if len(rep.Full.Baselines) != len(names) {
			t.Fatalf("slopes %s vs %s: baselines %+v, want %v", c.own, c.rival, rep.Full.Baselines, names)
		}
		for i, b := range rep.Full.Baselines {
			if b.Name != names[i] {
				t.Errorf("slopes %s vs %s: baseline %d is %s, want %s", c.own, c.rival, i, b.Name, names[i])
			}
		}
		// The rival as baseline: scored as the choice scored it, and
		// "better by" the difference of the scores the report gives.
		if b := rep.Full.Baselines; c.want == "main" && (!scalar.EqualWithinAbs(-b[1].Score, riv.Loss, 1e-9) || !scalar.EqualWithinAbs(b[1].Gain, rep.Full.Score-b[1].Score, 1e-12)) {
			t.Errorf("the rival as baseline: loss %g, want the choice's %g; gain %g, want %g", -b[1].Score, riv.Loss, b[1].Gain, rep.Full.Score-b[1].Score)
		}
		if len(rep.Warnings) != 0 {
			t.Errorf("slopes %s vs %s: warnings %q", c.own, c.rival, rep.Warnings)
		}
	}
}

// TestRunChoosesKindWorkers: with two workers and a kind to choose, the
// second repetition waits for the first one's choice (no model of the kind
// not chosen is fitted for it), and the results are the one-worker run's.
func TestRunChoosesKindWorkers(t *testing.T) {
	d := dataset(300, 6)
	ctx := context.Background()
	for _, c := range []struct {
		own, rival, want string
	}{
		{"6", "0", "main"},
		{"0", "6", "rival"},
	} {
		run := func(workers int) (*pipeline.Report, int32, int32) {
			var ownMade, rivalMade atomic.Int32
			rival := pipeline.Baseline{Name: "rival", Backend: countBackend{made: &rivalMade}, Options: map[string]string{"slope": c.rival}}
			cfg := pipeline.Config{Backend: countBackend{made: &ownMade}, BackendName: "main", Seed: 3, CrossFit: 3, Repeats: 2,
				Options: map[string]string{"slope": c.own}, Rivals: []pipeline.Baseline{rival}, Baselines: []pipeline.Baseline{rival}}
			rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), []framework.Estimator{shift{0}}, pipeline.EstimateOptions{Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			return rep, ownMade.Load(), rivalMade.Load()
		}
		one, _, _ := run(1)
		two, own, riv := run(2)
		if two.Backend != c.want || one.Backend != c.want {
			t.Fatalf("slopes %s vs %s: backends %q (2 workers) and %q (1), want %s", c.own, c.rival, two.Backend, one.Backend, c.want)
		}
		// The first repetition fits both kinds on its 3 folds, the
		// second the chosen kind's 3 only.
		wantOwn, wantRival := int32(6), int32(3)
		if c.want == "rival" {
			wantOwn, wantRival = 3, 6
		}
		if own != wantOwn || riv != wantRival {
			t.Errorf("slopes %s vs %s: made %d and %d models, want %d and %d", c.own, c.rival, own, riv, wantOwn, wantRival)
		}
		for i, w := range one.Results {
			g := two.Results[i]
			if g.Feature != w.Feature || g.VI != w.VI || g.SE != w.SE {
				t.Errorf("slopes %s vs %s, result %d: 2 workers %s vi %v se %v, 1 worker %s vi %v se %v", c.own, c.rival, i, g.Feature, g.VI, g.SE, w.Feature, w.VI, w.SE)
			}
		}
	}
}

// TestPrepareChosen: PrepareChosen chooses as Run's first repetition does
// (the backend's model only where it beats the rival by more than the
// standard error of the difference), returns the chosen kind's folds and
// the config that prepares that kind's other repetitions, and without
// rivals prepares the backend's folds and chooses nothing.
func TestPrepareChosen(t *testing.T) {
	d := dataset(300, 6)
	ctx := context.Background()
	for _, c := range []struct {
		own, rival, want string
		rivals           bool
	}{
		{"6", "0", "main", true},
		{"0", "6", "rival", true},
		{"0", "6", "main", false},
	} {
		var ownMade, rivalMade atomic.Int32
		rival := pipeline.Baseline{Name: "rival", Backend: countBackend{made: &rivalMade}, Options: map[string]string{"slope": c.rival}}
		cfg := pipeline.Config{Backend: countBackend{made: &ownMade}, BackendName: "main", Seed: 3, CrossFit: 3,
			Options: map[string]string{"slope": c.own}}
		if c.rivals {
			cfg.Rivals = []pipeline.Baseline{rival}
		}
		folds, chosen, ch, err := pipeline.PrepareChosen(ctx, d, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range folds {
			p.Close()
		}
		if len(folds) != 3 || chosen.BackendName != c.want || chosen.Options["slope"] != map[string]string{"main": c.own, "rival": c.rival}[c.want] {
			t.Errorf("slopes %s vs %s (rivals %v): %d folds, chose %s with %v; want 3 of %s", c.own, c.rival, c.rivals, len(folds), chosen.BackendName, chosen.Options, c.want)
		}
		if c.rivals != (ch != nil) || ch != nil && ch.Chosen != c.want {
			t.Errorf("slopes %s vs %s (rivals %v): choice %+v", c.own, c.rival, c.rivals, ch)
		}
		if c.want == "rival" && len(chosen.Rivals) != 0 {
			t.Errorf("the rival's config keeps rivals %v", chosen.Rivals)
		}
		wantRival := int32(0)
		if c.rivals {
			wantRival = 3
		}
		if ownMade.Load() != 3 || rivalMade.Load() != wantRival {
			t.Errorf("slopes %s vs %s (rivals %v): made %d and %d models, want 3 and %d", c.own, c.rival, c.rivals, ownMade.Load(), rivalMade.Load(), wantRival)
		}
	}
}
