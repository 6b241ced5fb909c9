package bench_test

import (
	"context"
	"slices"
	"testing"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/bench"
	"github.com/lazyvi/lazyvi/dataio"
	_ "github.com/lazyvi/lazyvi/estimators" // registers dropout and retrain
	_ "github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// TestData: a run on a linear setting's data reports every feature's time
// and dropout's agreement with retrain; on a linear model with x1 and x2
// correlated but every feature's effect known, the two agree in ranking.
func TestData(t *testing.T) {
	sim, err := simulate.Generate("linear", 400, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	ests, err := pipeline.LookupEstimators("dropout,retrain")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Data(context.Background(), bench.Input{Data: d, Backend: "linear"},
		bench.Options{Backend: linear.Backend{}, Estimators: ests, Workers: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Case != "data" || rep.Target != sim.Names[len(sim.Names)-1] || len(rep.Agreement) != 1 || rep.Agreement[0].Estimator != "dropout" {
		t.Fatalf("report: case %q, target %q, agreement %+v", rep.Case, rep.Target, rep.Agreement)
	}
	if rc := rep.Agreement[0].RankCorr; !(rc > 0.5) {
		t.Errorf("dropout's rank correlation with retrain %g, want above 0.5 on a linear model", rc)
	}
}

// TestWidths: networks split at commas, layers at colons.
func TestWidths(t *testing.T) {
	if got := bench.Widths(" 50,100:50 "); !slices.Equal(got, []string{"50", "100,50"}) {
		t.Errorf("Widths: %q", got)
	}
}
