package roar

import (
	"errors"
	"slices"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestParseOrderingsFractions: lists read in order, case and spaces
// aside; repeated, unknown, out-of-range and empty values are usage
// errors.
func TestParseOrderingsFractions(t *testing.T) {
	if got, err := ParseOrderings(" Random, grad "); err != nil || !slices.Equal(got, []string{"random", "grad"}) {
		t.Errorf("ParseOrderings: %v, %v", got, err)
	}
	for _, bad := range []string{"grad,grad", "best", " , "} {
		if _, err := ParseOrderings(bad); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("ParseOrderings(%q): %v, want a usage error", bad, err)
		}
	}
	if got, err := ParseFractions(".1, 1"); err != nil || !slices.Equal(got, []float64{0.1, 1}) {
		t.Errorf("ParseFractions: %v, %v", got, err)
	}
	for _, bad := range []string{"0", "1.5", "x", ""} {
		if _, err := ParseFractions(bad); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("ParseFractions(%q): %v, want a usage error", bad, err)
		}
	}
	if DefaultMeasure(framework.Binary) != "accuracy" || DefaultMeasure(framework.Regression) != "mse" {
		t.Errorf("DefaultMeasure: %s, %s", DefaultMeasure(framework.Binary), DefaultMeasure(framework.Regression))
	}
}
