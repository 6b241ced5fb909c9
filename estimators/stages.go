package estimators

import (
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// passFlops is the flops counted, for timing.Stages, for a pass of the
// model m over the rows of x: 2 a parameter a row (a dense layer's
// multiply-add per weight) where the model reports its parameters
// (framework.Gradienter), else 0, not counted.
func passFlops(m framework.Model, x mat.Matrix) float64 {
	g, ok := framework.As[framework.Gradienter](m)
	if !ok {
		return 0
	}
	rows, _ := x.Dims()
	return 2 * float64(rows) * float64(g.NumParams())
}
