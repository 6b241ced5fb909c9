package mlp

import (
	"context"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// TestLazyForgetsSignals: a lazy reduction, on the dense path as at scale,
// leaves nothing in the network's memo: it forgets its rows once done
// (framework.Forget), so that a run keeps the signals of the reductions in
// flight and not those of the features already done, whatever the budget.
// The memo does serve the reduction: the products on its rows find their
// signals there.
func TestLazyForgetsSignals(t *testing.T) {
	ctx := context.Background()
	sim, err := simulate.Generate("linear", 150, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(ctx, d, pipeline.Config{Backend: Backend{}, BackendName: "mlp", Seed: 3, Options: map[string]string{"hidden": "8", "epochs": "20"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	md := p.Full.(*Model)
	for _, c := range []struct {
		name string
		est  lazy.Estimator
	}{
		{"dense", lazy.Estimator{}},
		{"scaled", lazy.Estimator{Memory: 1 << 10}}, // nothing dense fits: matrix-free
	} {
		for _, f := range p.Features()[:2] {
			if _, err := c.est.Reduce(ctx, p, f); err != nil {
				t.Fatal(err)
			}
			if n, b := md.memo.Len(), md.memo.Bytes(); n != 0 || b != 0 {
				t.Errorf("%s, feature %s: the memo keeps %d entries (%d bytes) after the reduction, want none", c.name, f.Name, n, b)
			}
		}
	}
}
