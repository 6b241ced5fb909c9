package dataio

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// Dataset is a numeric table with named columns, as read from a CSV file with
// a header row. Source names where it came from (a file path) for messages.
type Dataset struct {
	Source string
	Names  []string
	X      *mat.Dense // rows x len(Names)
}

// CheckScale reports, as an *InputError naming the row and the column, the
// first cell that is not finite or too large in magnitude for the
// arithmetic the column goes through, so that extreme data fail before any
// model is trained instead of giving NaN or infinite importances:
//
//   - a feature is standardised: its squares, summed over the n rows, must
//     stay finite, with room for the centring (|x| < sqrt(MaxFloat64/(4n)),
//     about 1e152 for 1,000 rows);
//   - the response (column target; -1 for none) enters the measures, whose
//     standard errors sum squared squared errors: (2|y|)^4 n must stay
//     finite (|y| < (MaxFloat64/n)^(1/4)/2, about 1e76 for 1,000 rows).
func (d *Dataset) CheckScale(target int) error {
	n, cols := d.X.Dims()
	featLimit := math.Sqrt(math.MaxFloat64 / (4 * float64(n)))
	respLimit := math.Pow(math.MaxFloat64/float64(n), 0.25) / 2
	for j := 0; j < cols; j++ {
		limit, why := featLimit, "a feature's squares, summed over the rows to standardise it, must be finite"
		if j == target {
			limit, why = respLimit, "the measures' standard errors sum the response's errors to the fourth power"
		}
		for i := 0; i < n; i++ {
			v := d.X.At(i, j)
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				return &InputError{File: d.Source, Row: i + 2, Column: d.Names[j], Msg: fmt.Sprintf("%g is not a finite number", v)}
			case math.Abs(v) >= limit:
				return &InputError{File: d.Source, Row: i + 2, Column: d.Names[j],
					Msg: fmt.Sprintf("%g is too large in magnitude (%s: with %d rows, keep |values| below %.3g); rescale the column", v, why, n, limit)}
			}
		}
	}
	return nil
}

// Column returns the index of the named column. An unknown name is an
// *InputError naming the data set's source and the column, with the
// available names when there are few.
func (d *Dataset) Column(name string) (int, error) {
	for j, s := range d.Names {
		if s == name {
			return j, nil
		}
	}
	msg := fmt.Sprintf("no such column (the file has %d columns)", len(d.Names))
	if len(d.Names) <= 20 {
		msg = "no such column (have " + strings.Join(d.Names, ", ") + ")"
	}
	return -1, &InputError{File: d.Source, Column: name, Msg: msg}
}
