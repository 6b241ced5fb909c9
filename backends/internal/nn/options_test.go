package nn

import (
	"errors"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestFloatDecimalOnly: float options take the decimal numbers of a CSV
// cell, not Go's other literal forms.
func TestFloatDecimalOnly(t *testing.T) {
	for v, want := range map[string]float64{"1e-3": 0.001, ".5": 0.5, "+2": 2, "0": 0} {
		if got, err := Float("mlp", "lr", v, false); err != nil || got != want {
			t.Errorf("Float(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"0x1p-2", "1_0", "Inf", "NaN", "-1", "1e400", ""} {
		if got, err := Float("mlp", "lr", v, false); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("Float(%q) = %v, %v; want a usage error", v, got, err)
		}
	}
	if _, err := Float("mlp", "lr", "0", true); err == nil {
		t.Error("Float(0, positive): want an error")
	}
}
