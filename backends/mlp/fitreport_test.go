package mlp

import (
	"math/rand/v2"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestFitReport: the report says what ended training, and the validation
// slice is 20% of the rows by default, none with valid=0.
func TestFitReport(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := linearData(rng, 400, 4, 0.5, 0.1)
	for _, c := range []struct {
		opts      map[string]string
		stoppedBy string
		valid     int
	}{
		{nil, "patience", 80},
		{map[string]string{"epochs": "3"}, "cap", 80},
		{map[string]string{"valid": "0"}, "patience", 0},
		{map[string]string{"valid": "0.25", "epochs": "2"}, "cap", 100},
	} {
		md := fitModel(t, framework.Regression, x, y, 1, c.opts)
		r := md.FitReport()
		if r.StoppedBy != c.stoppedBy || r.ValidRows != c.valid || r.Epochs != md.Epochs() {
			t.Errorf("options %v: report %+v after %d epochs, want stopped by %s with %d validation rows", c.opts, r, md.Epochs(), c.stoppedBy, c.valid)
		}
		best := md.LossCurve()[0]
		for _, l := range md.LossCurve() {
			best = min(best, l)
		}
		if r.ValidLoss > best {
			t.Errorf("options %v: reported loss %g above the best epoch's %g", c.opts, r.ValidLoss, best)
		}
	}
}

// TestValidOption rejects shares outside [0, 0.5].
func TestValidOption(t *testing.T) {
	for _, v := range []string{"-0.1", "0.6", "x"} {
		if _, err := NewModel(framework.ModelSpec{Task: framework.Regression, Inputs: 2, Options: map[string]string{"valid": v}}); err == nil {
			t.Errorf("valid=%s: want a usage error", v)
		}
	}
}
