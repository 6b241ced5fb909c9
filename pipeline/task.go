package pipeline

import (
	"fmt"
	"math"

	"github.com/lazyvi/lazyvi/framework"
)

// InferTask returns Binary when every response is 0 or 1, Multiclass when
// the responses are class labels by the rule of IsClassLabels, else
// Regression.
func InferTask(y []float64) framework.Task {
	for _, v := range y {
		if v != 0 && v != 1 {
			if IsClassLabels(y) {
				return framework.Multiclass
			}
			return framework.Regression
		}
	}
	return framework.Binary
}

// MaxInferredClasses is the largest number of classes InferTask recognises
// without --task multiclass.
const MaxInferredClasses = 20

// MinInferredClassRows is the fewest rows every class must have for
// InferTask to call a response class labels.
const MinInferredClassRows = 5

// IsClassLabels is InferTask's rule for a multiclass response, chosen to be
// safe for integer-valued regression responses: the values are exactly the
// integers 0, 1, ..., K-1, every one of them present, with
// 3 <= K <= MaxInferredClasses and at least MinInferredClassRows rows in
// every class. A count that happens to fill 0..K-1 this densely is taken
// for classes too; force it with --task regression (Config.Task). Labels
// that do not start at 0, skip a value, or are not integers are never
// classes.
func IsClassLabels(y []float64) bool {
	k, err := NumClasses(y)
	if err != nil || k < 3 || k > MaxInferredClasses {
		return false
	}
	counts := make([]int, k)
	for _, v := range y {
		counts[int(v)]++
	}
	for _, c := range counts {
		if c < MinInferredClassRows {
			return false
		}
	}
	return true
}

// NumClasses returns K for a response of class labels 0..K-1: the values must
// be non-negative integers and every label below the largest must occur
// (K >= 2). It is what a forced Multiclass task requires.
func NumClasses(y []float64) (int, error) {
	maxv := -1.0
	for i, v := range y {
		if v < 0 || v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
			return 0, fmt.Errorf("row %d of the response is %v, not a class label 0, 1, 2, ...", i+1, v)
		}
		if v > 1e6 {
			return 0, fmt.Errorf("class label %v is too large", v)
		}
		maxv = math.Max(maxv, v)
	}
	k := int(maxv) + 1
	if k < 2 {
		return 0, fmt.Errorf("need at least 2 classes, found %d", k)
	}
	seen := make([]bool, k)
	for _, v := range y {
		seen[int(v)] = true
	}
	for c, ok := range seen {
		if !ok {
			return 0, fmt.Errorf("class %d of 0..%d does not occur (labels must be 0..K-1, every one present)", c, k-1)
		}
	}
	return k, nil
}
