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
