package pipeline

import (
	"fmt"
	"sort"

	"github.com/lazyvi/lazyvi/framework"
)

// MinClassRows is the fewest rows of a class, over every fold's evaluation
// rows, below which rareClassNote warns: with fewer, each fold's
// evaluation rows hold one or two of the class, and the VIs and their
// intervals rest on those few rows.
const MinClassRows = 10

// rareClassNote says which classes of a classification task (0/1, or
// 0..K-1) have fewer than MinClassRows rows among the folds' evaluation
// rows (each row is evaluated once), and what that means; "" for regression or where every
// class has enough rows.
func rareClassNote(folds []*framework.Problem) string {
	if len(folds) == 0 || folds[0].Task == framework.Regression {
		return ""
	}
	counts := map[float64]int{}
	// Every class of the task counts, those with no evaluation row too
	// (the worst case: all its rows are training rows).
	classes := 2
	if folds[0].Task == framework.Multiclass {
		classes = folds[0].Classes
	}
	for c := range classes {
		counts[float64(c)] = 0
	}
	total := 0
	for _, p := range folds {
		for _, y := range p.YEval {
			counts[y]++
			total++
		}
	}
	var rare []float64
	for c, k := range counts {
		if k < MinClassRows {
			rare = append(rare, c)
		}
	}
	if len(rare) == 0 {
		return ""
	}
	sort.Float64s(rare)
	c := rare[0]
	more := ""
	if len(rare) > 1 {
		more = fmt.Sprintf(" (and %d more classes under %d rows)", len(rare)-1, MinClassRows)
	}
	return fmt.Sprintf("class %g has %d of the %d evaluation rows%s: the VIs and their intervals rest on so few rows of it, and a model can score well by never predicting it; gather more rows of the class, or merge it with another",
		c, counts[c], total, more)
}
