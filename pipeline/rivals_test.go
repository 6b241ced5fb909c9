package pipeline

import (
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
)

// TestRivalsRunning: the linear model stays a rival of a run of dropout and
// retrain, and is left out, with a note naming the estimator and what it
// needs, from a run that asks for warm-es (early-stopped warm starts,
// which the linear backend lacks).
func TestRivalsRunning(t *testing.T) {
	rivals := []Baseline{{Name: "linear", Backend: linear.Backend{}}}
	keep, notes := rivalsRunning(rivals, []framework.Estimator{estimators.Dropout{}, estimators.Retrain{}})
	if len(keep) != 1 || len(notes) != 0 {
		t.Errorf("dropout, retrain: kept %d rivals, notes %q", len(keep), notes)
	}
	keep, notes = rivalsRunning(rivals, []framework.Estimator{estimators.Dropout{}, estimators.WarmES{}})
	if len(keep) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "the linear model was not considered as the full model: warm-es needs") {
		t.Errorf("dropout, warm-es: kept %d rivals, notes %q", len(keep), notes)
	}
}
