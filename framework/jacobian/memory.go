package jacobian

import (
	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// Forget tells m that the caller is done with the inputs xs when m is a
// framework.Forgetter (the lazy estimator, once a reduction is done, of
// its rows); nil matrices are skipped.
func Forget(m framework.Model, xs ...mat.Matrix) {
	if f, ok := m.(framework.Forgetter); ok {
		if keep := nonNil(xs); len(keep) > 0 {
			f.Forget(keep...)
		}
	}
}

// Hold tells m that the inputs xs keep their values until the caller's
// Forget of them when m is a framework.Holder (the lazy estimator, of a
// reduction's own copies of its rows); nil matrices are skipped.
func Hold(m framework.Model, xs ...mat.Matrix) {
	if h, ok := m.(framework.Holder); ok {
		if keep := nonNil(xs); len(keep) > 0 {
			h.Hold(keep...)
		}
	}
}

func nonNil(xs []mat.Matrix) []mat.Matrix {
	keep := make([]mat.Matrix, 0, len(xs))
	for _, x := range xs {
		if x != nil {
			keep = append(keep, x)
		}
	}
	return keep
}
