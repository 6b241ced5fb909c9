package dataio

import (
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestCellKinds: ReadCSV's errors say what kind of cell was not a
// number, for a tool to say what to do: a word is text, an empty cell and
// NA a missing value, a malformed number neither.
func TestCellKinds(t *testing.T) {
	for _, tc := range []struct {
		cell          string
		text, missing bool
	}{
		{"north", true, false},
		{"Süd", true, false},
		{"", false, true},
		{"NA", false, true},
		{"1,5", false, false},
		{"0x1p-2", false, false},
		{"1.2.3", false, false},
		{"NaN", false, false},
	} {
		_, err := ReadCSV(strings.NewReader("a,b\n1,"+csvCell(tc.cell)+"\n"), "d.csv")
		if err == nil {
			t.Fatalf("%q: no error", tc.cell)
		}
		var ie *InputError
		if !errors.As(err, &ie) || ie.Column != "b" || ie.Row != 2 {
			t.Errorf("%q: %v, want an InputError at row 2, column b", tc.cell, err)
		}
		if got := errors.Is(err, ErrText); got != tc.text {
			t.Errorf("%q: errors.Is(ErrText) = %v (%v)", tc.cell, got, err)
		}
		if got := errors.Is(err, ErrMissingValue); got != tc.missing {
			t.Errorf("%q: errors.Is(ErrMissingValue) = %v (%v)", tc.cell, got, err)
		}
		if !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%q: not a usage error: %v", tc.cell, err)
		}
	}
}

func csvCell(s string) string {
	if strings.Contains(s, ",") {
		return `"` + s + `"`
	}
	return s
}
