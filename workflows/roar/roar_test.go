package roar_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
	"github.com/lazyvi/lazyvi/workflows/roar"
)

// A small ROAR run on the paper's linear setting (y = 1.5 x1 + 1.2 x2 + x3
// + noise, x4..x6 null): the grad ordering removes the three signal
// features first, so at half the features removed retrain has lost nearly
// all of the R², while the random ordering has lost less.
func TestSmallROAR(t *testing.T) {
	ctx := context.Background()
	p := linearProblem(t)
	ests := []framework.Estimator{estimators.Dropout{}, estimators.Retrain{}, estimators.LazyES{Steps: 100}}
	rep, err := roar.Run(ctx, p, measures.R2(), ests, roar.Options{Orderings: []string{"grad", "random"}, Fractions: []float64{0.5, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Orders["grad"][:3]; !sameSet(got, []string{"x1", "x2", "x3"}) {
		t.Errorf("grad ordering starts with %v, want x1, x2, x3 in some order", got)
	}
	if len(rep.Results) != 3*2*2 {
		t.Fatalf("want 12 results, got %d", len(rep.Results))
	}
	score := map[string]roar.Result{}
	for _, r := range rep.Results {
		t.Logf("%-7s %-8s %.2f removed %d score %.4f se %.4f %.3fs", r.Ordering, r.Estimator, r.Fraction, r.Removed, r.Score, r.SE, r.Seconds)
		score[fmt.Sprintf("%s/%s/%g", r.Ordering, r.Estimator, r.Fraction)] = r
		if r.SE <= 0 {
			t.Errorf("%+v: se not positive", r)
		}
	}
	full := rep.Full
	g := score["grad/retrain/0.5"]
	if g.Removed != 3 {
		t.Errorf("grad at 0.5 removed %d features, want 3", g.Removed)
	}
	// Tolerances from the standard errors: the signal removed, retrain's
	// R² falls below 0.1 (within 3 se); everything removed, every
	// estimator is near 0 or below.
	if g.Score > 0.1+3*g.SE {
		t.Errorf("retrain without x1..x3: R² %.4f (se %.4f), want about 0", g.Score, g.SE)
	}
	if full.Score < 0.9 {
		t.Errorf("full model R² %.4f, want above 0.9", full.Score)
	}
	for _, est := range []string{"dropout", "retrain", "lazy-es"} {
		r := score["random/"+est+"/1"]
		if r.Removed != 6 || r.Score > 3*r.SE {
			t.Errorf("%s with every feature removed: %d removed, R² %.4f (se %.4f), want 6 and about 0 or below", est, r.Removed, r.Score, r.SE)
		}
	}
	if rep.Seconds["retrain"] <= 0 {
		t.Errorf("no wall time for retrain")
	}

	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Measure string
		Results []map[string]any
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ordering", "fraction", "estimator", "score", "se", "seconds"} {
		if _, ok := back.Results[0][k]; !ok {
			t.Errorf("JSON result lacks %q: %s", k, b)
		}
	}
	if back.Measure != "r2" {
		t.Errorf("JSON measure %q", back.Measure)
	}

	if _, err := roar.Order(ctx, p, "saliency"); err == nil {
		t.Errorf("unknown ordering: want an error")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// ROAR over groups of columns: the grad ordering ranks the groups by their
// columns' summed input gradients ({x1, x2} carries most of the signal,
// then x3, the null group none), a fraction removes round(t g) groups, and
// the report counts the groups and the columns removed. Removing {x1, x2}
// leaves retrain at most the share of the variance x3 explains: 1 of
// Var(1.5 x1 + 1.2 x2) + 1 + noise 0.1 = 6.59 at rho 0.5, R² 0.152, far
// below the full model's.
func TestROARGroups(t *testing.T) {
	ctx := context.Background()
	p := linearProblem(t)
	gs, err := dataio.ParseGroups("null=x4,x5,x6;sig=x1,x2")
	if err != nil {
		t.Fatal(err)
	}
	units, err := dataio.ResolveFeatures(p.FeatureNames, "", gs, false)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := roar.Run(ctx, p, measures.R2(), []framework.Estimator{estimators.Retrain{}},
		roar.Options{Orderings: []string{"grad", "random"}, Fractions: []float64{0.34, 1}, Groups: units})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Orders["grad"]; !slices.Equal(got, []string{"sig", "x3", "null"}) {
		t.Errorf("grad ordering of the groups %v, want sig, x3, null", got)
	}
	if rep.Groups != 3 || len(rep.Orders["random"]) != 3 {
		t.Errorf("report: %d groups, random ordering %v; want 3 groups", rep.Groups, rep.Orders["random"])
	}
	for _, r := range rep.Results {
		t.Logf("%-7s %.2f removed %d (%d columns) R² %.4f se %.4f", r.Ordering, r.Fraction, r.Removed, r.Columns, r.Score, r.SE)
		if r.Fraction == 1 && (r.Removed != 3 || r.Columns != 6) {
			t.Errorf("%s at 1: removed %d groups, %d columns; want 3 and 6", r.Ordering, r.Removed, r.Columns)
		}
		if r.Ordering == "grad" && r.Fraction == 0.34 {
			if r.Removed != 1 || r.Columns != 2 {
				t.Errorf("grad at 0.34: removed %d groups, %d columns; want 1 and 2", r.Removed, r.Columns)
			}
			if r.Score > 1/6.59+4*r.SE || rep.Full.Score-r.Score < 10*r.SE {
				t.Errorf("retrain without x1, x2: R² %.4f (se %.4f), want at most %.3f and far below the full model's %.4f", r.Score, r.SE, 1/6.59, rep.Full.Score)
			}
		}
	}

	// Groups may share columns: removing both removes each column once.
	overlap := []framework.Feature{{Name: "a", Columns: []int{0, 1}}, {Name: "b", Columns: []int{1, 2}}}
	rep, err = roar.Run(ctx, p, measures.R2(), []framework.Estimator{estimators.Dropout{}}, roar.Options{Orderings: []string{"random"}, Fractions: []float64{1}, Groups: overlap})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Removed != 2 || r.Columns != 3 {
		t.Errorf("overlapping groups: removed %d groups, %d columns; want 2 and 3", r.Removed, r.Columns)
	}
	bad := []framework.Feature{{Name: "a", Columns: []int{6}}}
	if _, err := roar.Run(ctx, p, measures.R2(), []framework.Estimator{estimators.Dropout{}}, roar.Options{Groups: bad}); err == nil {
		t.Error("a group with column 6 of 6 features: want an error")
	}
}

// linearProblem is the paper's linear setting (900 rows, rho 0.5, seed 2)
// prepared on the mlp; it is closed when the test ends.
func linearProblem(t *testing.T) *framework.Problem {
	t.Helper()
	sim, err := simulate.Generate("linear", 900, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: mlp.Backend{}, BackendName: "mlp", Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
