package pipeline

import (
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestRareClassNote: a binary response with 3 positives among 200
// evaluation rows (over three folds) is warned of, naming the class and
// its count; one with MinClassRows positives, and a regression, are not.
func TestRareClassNote(t *testing.T) {
	folds := func(task framework.Task, positives int) []*framework.Problem {
		var out []*framework.Problem
		for _, size := range []int{67, 67, 66} {
			y := make([]float64, size)
			for i := range y {
				if positives > 0 {
					y[i], positives = 1, positives-1
				}
			}
			out = append(out, &framework.Problem{Task: task, YEval: y})
		}
		return out
	}
	note := rareClassNote(folds(framework.Binary, 3))
	if !strings.Contains(note, "class 1 has 3 of the 200 evaluation rows") {
		t.Errorf("3 positives: note %q", note)
	}
	if note := rareClassNote(folds(framework.Binary, MinClassRows)); note != "" {
		t.Errorf("%d positives: note %q", MinClassRows, note)
	}
	if note := rareClassNote(folds(framework.Binary, 0)); !strings.Contains(note, "class 1 has 0 of the 200 evaluation rows") {
		t.Errorf("no positive evaluation row: note %q", note)
	}
	if note := rareClassNote(folds(framework.Regression, 3)); note != "" {
		t.Errorf("regression: note %q", note)
	}
}
