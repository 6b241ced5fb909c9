package shapley_test

import (
	"testing"

	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// TestFixedPenalty: lazy with a fixed Lambda gives it; lazy choosing its
// penalty, and no estimators, give 0.
func TestFixedPenalty(t *testing.T) {
	if got := shapley.FixedPenalty([]framework.Estimator{lazy.Estimator{Lambda: 50}}); got != 50 {
		t.Errorf("fixed: %g, want 50", got)
	}
	if got := shapley.FixedPenalty([]framework.Estimator{lazy.Estimator{}}); got != 0 {
		t.Errorf("chosen: %g, want 0", got)
	}
	if got := shapley.FixedPenalty(nil); got != 0 {
		t.Errorf("none: %g, want 0", got)
	}
}
