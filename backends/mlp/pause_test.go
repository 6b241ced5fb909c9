package mlp

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/pause"
)

// TestFitPauses: a fit calls pause.Point between its steps (the backend
// is a pause.Pauser), and the pauses change none of its parameters.
func TestFitPauses(t *testing.T) {
	var _ pause.Pauser = Backend{}
	rng := rand.New(rand.NewPCG(5, 6))
	x, y := linearData(rng, 300, 3, 0.5, 0.1)
	plain := fitModel(t, framework.Regression, x, y, 2, map[string]string{"epochs": "4"})
	md, err := NewModel(framework.ModelSpec{Task: framework.Regression, Inputs: 3, Seed: 2, Options: map[string]string{"epochs": "4"}})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	ctx := pause.With(context.Background(), func(context.Context) error { calls++; return nil })
	if err := md.Fit(ctx, x, y); err != nil {
		t.Fatal(err)
	}
	// 240 training rows in minibatches: at least one pause an epoch.
	if calls < md.Epochs() {
		t.Errorf("%d pauses in %d epochs, want at least one an epoch", calls, md.Epochs())
	}
	if !slices.Equal(md.Params(), plain.Params()) {
		t.Error("a fit with pauses has other parameters than one without")
	}
}
