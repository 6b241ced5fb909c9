package nn

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
)

func rowsData(n, p int) (blas64.General, []float64) {
	x := blas64.General{Rows: n, Cols: p, Stride: p, Data: make([]float64, n*p)}
	y := make([]float64, n)
	for i := range n {
		for j := range p {
			x.Data[i*p+j] = float64(i*10 + j)
		}
		y[i] = float64(i)
	}
	return x, y
}

// TestSplitValid: round(frac n) rows held out, the rest kept in order,
// rows and targets together, the same for the same seed whatever the
// columns, and no slice when it would be too small.
func TestSplitValid(t *testing.T) {
	x, y := rowsData(200, 3)
	s := SplitValid(x, y, 0.15, 7)
	if !s.Valid() || s.ValidX.Rows != 30 || s.X.Rows != 170 || len(s.Target) != 170 || len(s.ValidTarget) != 30 {
		t.Fatalf("split of 200 rows at 0.15: %d train, %d validation rows", s.X.Rows, s.ValidX.Rows)
	}
	seen := map[float64]bool{}
	for part, tg := range [][]float64{s.Target, s.ValidTarget} {
		xs := []blas64.General{s.X, s.ValidX}[part]
		if !slices.IsSorted(tg) {
			t.Errorf("part %d: rows out of order", part)
		}
		for r, v := range tg {
			seen[v] = true
			if xs.Data[r*3+2] != v*10+2 {
				t.Errorf("part %d row %d: features of row %v, target %v", part, r, xs.Data[r*3]/10, v)
			}
		}
	}
	if len(seen) != 200 {
		t.Errorf("%d distinct rows after the split, want 200", len(seen))
	}
	x1, _ := rowsData(200, 1)
	if s1 := SplitValid(x1, y, 0.15, 7); !slices.Equal(s1.ValidTarget, s.ValidTarget) {
		t.Errorf("the validation rows depend on the columns: %v vs %v", s1.ValidTarget, s.ValidTarget)
	}
	if s2 := SplitValid(x, y, 0.15, 8); slices.Equal(s2.ValidTarget, s.ValidTarget) {
		t.Errorf("seeds 7 and 8 hold out the same rows")
	}
	for _, c := range []struct {
		n    int
		frac float64
	}{{200, 0}, {100, 0.15}, {30, 0.5}} {
		x, y := rowsData(c.n, 2)
		if s := SplitValid(x, y, c.frac, 1); s.Valid() || s.X.Rows != c.n {
			t.Errorf("n %d, frac %g: want no validation slice, got %d rows", c.n, c.frac, s.ValidX.Rows)
		}
	}
	if mx, _ := SplitValid(x, y, 0, 1).Monitored(); mx.Rows != 200 {
		t.Errorf("without a slice the training rows are monitored: got %d rows", mx.Rows)
	}
}
