package pipeline

import (
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// unseenNote says how many evaluation rows of the folds hold a category
// that the fold's training rows lack (their column's indicators are all 0,
// dataio.Encoding.FitFill), naming the first few such categories; "" when
// none does or the data set is not encoded. Training rows are every row
// not evaluated in the fold.
func unseenNote(d *dataio.Dataset, folds []*framework.Problem) string {
	if d.Encoding == nil {
		return ""
	}
	index := make(map[string]int, len(d.Names))
	for j, n := range d.Names {
		index[n] = j
	}
	n, _ := d.X.Dims()
	rows := 0
	var seen []string
	for _, p := range folds {
		eval := make([]bool, n)
		for _, i := range p.EvalRows {
			eval[i] = true
		}
		for _, c := range d.Encoding.Columns {
			if !c.Categorical() {
				continue
			}
			for k := range c.Levels {
				j := index[c.Columns[k]]
				inTrain, inEval := false, 0
				for i := 0; i < n; i++ {
					if d.X.At(i, j) == 1 {
						if eval[i] {
							inEval++
						} else {
							inTrain = true
						}
					}
				}
				if !inTrain && inEval > 0 {
					rows += inEval
					if len(seen) < 3 {
						seen = append(seen, c.Columns[k])
					}
				}
			}
		}
	}
	if rows == 0 {
		return ""
	}
	return fmt.Sprintf("%d evaluation %s a category that their models' training rows lack (%s): such a row has all of its column's indicators 0",
		rows, plural(rows, "row has", "rows have"), strings.Join(seen, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
