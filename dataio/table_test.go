package dataio

import (
	"math"
	"testing"
)

// A whole number of a numeric column is its category as written, without
// an exponent, so that messages quote a fold number or a code as the file
// has it.
func TestCategoryWholeNumbers(t *testing.T) {
	c := &TableColumn{Name: "fold", Numbers: []float64{7, 1e12, 2.5, math.NaN(), -3}}
	for i, want := range []string{"7", "1000000000000", "2.5", "", "-3"} {
		got, ok := c.Category(i)
		if got != want || ok != (want != "") {
			t.Errorf("row %d: Category %q, %v; want %q", i, got, ok, want)
		}
	}
}
