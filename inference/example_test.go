package inference_test

import (
	"fmt"

	"github.com/lazyvi/lazyvi/inference"
)

// The p-value of one importance estimate against H0: VI <= 0, and the
// p-values of one estimator's features adjusted as one family, as vi's
// --adjust holm and --adjust bh do.
func ExampleAdjustPValues() {
	fmt.Printf("VI 0.3, se 0.1: p %.5f\n", inference.OneSidedPValue(0.3, 0.1, 0))
	p := []float64{0.01, 0.04, 0.03, 0.5}
	for _, a := range []inference.Adjust{inference.AdjustHolm, inference.AdjustBH} {
		fmt.Printf("%-4s %.3g\n", a, inference.AdjustPValues(p, a))
	}
	// Output:
	// VI 0.3, se 0.1: p 0.00135
	// holm [0.04 0.09 0.09 0.5]
	// bh   [0.04 0.0533 0.0533 0.5]
}
