package measures_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/measures"
)

// A measure scores predictions against the responses, larger is better
// (mse reports -MSE), with each sample's influence on the value, from
// which a difference of two models' values gets its standard error.
func ExampleMSE() {
	y := []float64{1, 2, 3, 4}
	pred := mat.NewDense(4, 1, []float64{1.5, 2, 2.5, 4})
	s, err := measures.MSE().Evaluate(y, pred)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("value %.3f, influence %.3f\n", s.Value, s.Influence)
	// Output:
	// value -0.125, influence [-0.125 0.125 -0.125 0.125]
}
