package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

func TestImageGroups(t *testing.T) {
	// A 2x3 image: px_r_c in row-major order, then the response.
	d := &dataio.Dataset{Source: "img.csv", Names: []string{"p00", "p01", "p02", "p10", "p11", "p12", "y"}, X: mat.NewDense(1, 7, nil)}
	for i, tc := range []struct {
		by, image string
		want      string
	}{
		{"rows", "2x3", "[{row0 [p00 p01 p02]} {row1 [p10 p11 p12]}]"},
		{"cols", "2x3", "[{col0 [p00 p10]} {col1 [p01 p11]} {col2 [p02 p12]}]"},
		{"patch2x2", "2x3", "[{p0_0 [p00 p01 p10 p11]} {p0_1 [p02 p12]}]"},
		{"patch1x3", "2x3", "[{p0_0 [p00 p01 p02]} {p1_0 [p10 p11 p12]}]"},
		{"patch1x1", "2x3", "[{p0_0 [p00]} {p0_1 [p01]} {p0_2 [p02]} {p1_0 [p10]} {p1_1 [p11]} {p1_2 [p12]}]"},
	} {
		gs, err := imageGroups(d, "", tc.image, tc.by)
		if err != nil {
			t.Fatalf("Case %d: %v", i, err)
		}
		if got := fmt.Sprint(gs); got != tc.want {
			t.Errorf("Case %d: want %s, got %s", i, tc.want, got)
		}
	}
	for i, tc := range []struct{ by, image, want string }{
		{"rows", "", "needs --image HxW"},
		{"rows", "3x3", "has 9 pixels but img.csv has 6 features"},
		// H*W overflowed to a small count (64) and matched the columns.
		{"rows", "4x4611686018427387920", "needs --image HxW (the features are the pixels of an image, at most 16777216)"},
		{"patch2x2", "4611686018427387920x4", "needs --image HxW"},
		{"patch3x1", "2x3", "want patchRxC with 1 <= R <= 2 and 1 <= C <= 3"},
		{"patch0x1", "2x3", "want patchRxC"},
		{"patch2x2x", "2x3", "want patchRxC"},
		{"patches", "2x3", "want patchRxC"},
	} {
		_, err := imageGroups(d, "", tc.image, tc.by)
		if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Case %d: want a usage error containing %q, got %v", i, tc.want, err)
		}
	}
}
