package pipeline

import (
	"fmt"

	"github.com/lazyvi/lazyvi/framework"
)

// MinClassRows is the fewest rows of a class, over every fold's evaluation
// rows, below which rareClassNote warns: with fewer, each fold's
// evaluation rows hold one or two of the class, and the VIs and their
// intervals rest on those few rows.
const MinClassRows = 10

// rareClassNote says which classes of a classification task (labels 0/1,
// or 0..K-1) have fewer than MinClassRows rows among the folds'
// evaluation rows (each row is evaluated once), those with none included
// (all their rows training rows), and what that means; "" for regression
// or where every class has enough rows.
func rareClassNote(folds []*framework.Problem) string {
	if len(folds) == 0 || folds[0].Task == framework.Regression {
		return ""
	}
	classes := 2
	if folds[0].Task == framework.Multiclass {
		classes = folds[0].Classes
	}
	counts := make([]int, classes)
	total := 0
	for _, p := range folds {
		for _, y := range p.YEval {
			if c := int(y); c >= 0 && c < classes {
				counts[c]++
			}
			total++
		}
	}
	first, rare := -1, 0
	for c, k := range counts {
		if k < MinClassRows {
			if first < 0 {
				first = c
			}
			rare++
		}
	}
	if rare == 0 {
		return ""
	}
	more := ""
	if rare > 1 {
		more = fmt.Sprintf(" (and %d more classes under %d rows)", rare-1, MinClassRows)
	}
	return fmt.Sprintf("class %d has %d of the %d evaluation rows%s: the VIs and their intervals rest on so few rows of it, and a model can score well by never predicting it; gather more rows of the class, or merge it with another",
		first, counts[first], total, more)
}
