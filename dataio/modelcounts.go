package dataio

import "fmt"

// CountsString says what a model file of crossfit folds (below 2: one
// train/evaluation split) and repeats repetitions holds, for messages:
// "one train/evaluation split's model", "3 cross-fitting folds' models",
// "3 repetitions of 3 cross-fitting folds' models".
func CountsString(crossfit, repeats int) string {
	what := "one train/evaluation split's model"
	if crossfit >= 2 {
		what = fmt.Sprintf("%d cross-fitting folds' models", crossfit)
	}
	if repeats > 1 {
		return fmt.Sprintf("%d repetitions of %s", repeats, what)
	}
	return what
}
