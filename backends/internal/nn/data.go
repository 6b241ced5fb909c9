package nn

import (
	"context"
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Input returns x as a row-major matrix without copying when x is a
// *mat.Dense (or another mat.RawMatrixer), checking that it has rows and
// cols columns.
func Input(name string, x mat.Matrix, cols int) (blas64.General, error) {
	if x == nil {
		return blas64.General{}, fmt.Errorf("%s: nil input matrix", name)
	}
	r, c := x.Dims()
	if c != cols {
		return blas64.General{}, fmt.Errorf("%s: input has %d columns, model expects %d", name, c, cols)
	}
	if r == 0 {
		return blas64.General{}, fmt.Errorf("%s: input has no rows", name)
	}
	if rm, ok := x.(mat.RawMatrixer); ok {
		return rm.RawMatrix(), nil
	}
	return mat.DenseCopyOf(x).RawMatrix(), nil
}

// Ready checks that a model is fitted and ctx is not done.
func Ready(ctx context.Context, name string, fitted bool) error {
	if !fitted {
		return errors.New(name + ": model is not fitted")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Shifted returns theta + dtheta for PredictShifted.
func Shifted(name string, theta, dtheta []float64) ([]float64, error) {
	if len(dtheta) != len(theta) {
		return nil, fmt.Errorf("%s: PredictShifted: len(dtheta) = %d, want NumParams() = %d", name, len(dtheta), len(theta))
	}
	shifted := make([]float64, len(theta))
	for i, t := range theta {
		shifted[i] = t + dtheta[i]
	}
	return shifted, nil
}

// RepeatRows returns a new matrix with every row of x repeated k times in
// place (row i*k + j is row i of x).
func RepeatRows(x blas64.General, k int) blas64.General {
	n, p := x.Rows, x.Cols
	rows := n * k
	xr := blas64.General{Rows: rows, Cols: p, Stride: p, Data: make([]float64, rows*p)}
	for i := 0; i < n; i++ {
		src := x.Data[i*x.Stride : i*x.Stride+p]
		for j := 0; j < k; j++ {
			copy(xr.Data[(i*k+j)*p:(i*k+j+1)*p], src)
		}
	}
	return xr
}

// ColSums adds the column sums of d to dst.
func ColSums(dst []float64, d blas64.General) {
	for i := 0; i < d.Rows; i++ {
		for j, v := range d.Data[i*d.Stride : i*d.Stride+d.Cols] {
			dst[j] += v
		}
	}
}

// FitArgs makes the checks Fit makes before training (not fitted yet, x
// with cols columns, one response per row) and returns x as a row-major
// matrix and the head's training targets, standardising a regression
// response first (the head keeps mu and sd).
func (h *Head) FitArgs(fitted bool, x mat.Matrix, cols int, y []float64) (blas64.General, []float64, error) {
	if fitted {
		return blas64.General{}, nil, errors.New(h.Name + ": Fit called twice")
	}
	xg, err := Input(h.Name, x, cols)
	if err != nil {
		return blas64.General{}, nil, err
	}
	if len(y) != xg.Rows {
		return blas64.General{}, nil, fmt.Errorf("%s: Fit: %d rows but %d responses", h.Name, xg.Rows, len(y))
	}
	if err := h.Standardize(y); err != nil {
		return blas64.General{}, nil, err
	}
	target, err := h.Targets(y)
	return xg, target, err
}

// WarmArgs is FitArgs for WarmStart: the model must be fitted (and ctx
// live), and the targets use the head's scaling as it is.
func (h *Head) WarmArgs(ctx context.Context, fitted bool, x mat.Matrix, cols int, y []float64) (blas64.General, []float64, error) {
	if err := Ready(ctx, h.Name, fitted); err != nil {
		return blas64.General{}, nil, err
	}
	xg, err := Input(h.Name, x, cols)
	if err != nil {
		return blas64.General{}, nil, err
	}
	if len(y) != xg.Rows {
		return blas64.General{}, nil, fmt.Errorf("%s: WarmStart: %d rows but %d responses", h.Name, xg.Rows, len(y))
	}
	target, err := h.Targets(y)
	return xg, target, err
}
