package pipeline

import (
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/measures"
)

// TestBaselineWarningSign: a full model worse than the linear baseline is
// said to be worse by a positive amount, never "better by" a negative one,
// and its loss reads as a loss.
func TestBaselineWarningSign(t *testing.T) {
	f := FullResult{Score: -21.25, Baselines: []BaselineScore{{Name: "linear", Score: -19.65, Gain: -1.6, GainSE: 2.98}}}
	ws := fullWarnings(measures.MSE(), f)
	if len(ws) != 1 || !strings.Contains(ws[0], "(mse 21.25 vs 19.65, full model worse by 1.6, se 2.98)") {
		t.Errorf("warnings %q", ws)
	}
	f.Baselines[0].Gain, f.Baselines[0].Score = 1.6, -22.85
	ws = fullWarnings(measures.MSE(), f)
	if len(ws) != 1 || !strings.Contains(ws[0], "full model better by 1.6, se 2.98") {
		t.Errorf("warnings %q", ws)
	}
}

// TestInterceptWarning: a full model that does not beat the intercept-only
// model beyond its standard error is told to have found no signal; one that
// beats it by more than its standard error is not.
func TestInterceptWarning(t *testing.T) {
	f := FullResult{Score: -0.0854, Baselines: []BaselineScore{{Name: InterceptName, Score: -0.0848, Gain: -0.0006, GainSE: 0.0023}}}
	ws := fullWarnings(measures.MSE(), f)
	if len(ws) != 1 || !strings.Contains(ws[0], "does not beat the intercept-only model") || !strings.Contains(ws[0], "found no signal") {
		t.Errorf("warnings %q", ws)
	}
	f.Baselines[0].Gain = 0.01
	if ws := fullWarnings(measures.MSE(), f); len(ws) != 0 {
		t.Errorf("a full model better than the intercept by 4 se: warnings %q", ws)
	}
}
