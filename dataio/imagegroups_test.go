package dataio

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestImageGroups: a 2x3 image's pixels group by rows, columns and
// patches; a patch larger than the image, an image of another size and an
// unknown response are refused.
func TestImageGroups(t *testing.T) {
	d := &Dataset{Source: "img.csv", Names: []string{"y", "p00", "p01", "p02", "p10", "p11", "p12"}, X: mat.NewDense(1, 7, nil)}
	for _, tc := range []struct{ by, want string }{
		{"rows", "[{row0 [p00 p01 p02]} {row1 [p10 p11 p12]}]"},
		{"cols", "[{col0 [p00 p10]} {col1 [p01 p11]} {col2 [p02 p12]}]"},
		{"patch2x2", "[{p0_0 [p00 p01 p10 p11]} {p0_1 [p02 p12]}]"},
	} {
		gs, err := ImageGroups(d, "y", 2, 3, tc.by)
		if err != nil {
			t.Fatalf("%s: %v", tc.by, err)
		}
		if got := fmt.Sprint(gs); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.by, got, tc.want)
		}
	}
	for _, tc := range []struct {
		target, by string
		h, w       int
	}{{"y", "patch3x1", 2, 3}, {"y", "rows", 3, 3}, {"nope", "rows", 2, 3}} {
		if _, err := ImageGroups(d, tc.target, tc.h, tc.w, tc.by); err == nil {
			t.Errorf("target %q, %dx%d by %s: no error", tc.target, tc.h, tc.w, tc.by)
		}
	}
}
