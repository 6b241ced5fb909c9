package lazy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestExplainSingularRareClass: a singular ridge system of a binary
// response with a rare class says why and what to do; one of a balanced
// response, or another error, passes unchanged.
func TestExplainSingularRareClass(t *testing.T) {
	y := make([]float64, 200)
	y[3], y[70], y[150] = 1, 1, 1
	singular := fmt.Errorf("%w: the 100 x 100 system at alpha 1e-12 is not positive definite", errSingular)
	err := explainSingular(&framework.Problem{Task: framework.Binary, YTrain: y}, singular)
	if !errors.Is(err, errSingular) || !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "3 of 200 training rows of class 1") || !strings.Contains(err.Error(), "--lambda") {
		t.Errorf("3 positives in 200: %v", err)
	}
	for i := range y {
		y[i] = float64(i % 2)
	}
	if err := explainSingular(&framework.Problem{Task: framework.Binary, YTrain: y}, singular); err != singular {
		t.Errorf("balanced: %v, want the error unchanged", err)
	}
	other := errors.New("other")
	if err := explainSingular(&framework.Problem{Task: framework.Binary, YTrain: make([]float64, 10)}, other); err != other {
		t.Errorf("another error: %v, want it unchanged", err)
	}
}
