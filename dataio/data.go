package dataio

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Dataset is a numeric table with named columns, as read from a CSV file with
// a header row. Source names where it came from (a file path) for messages.
type Dataset struct {
	Source string
	Names  []string
	X      *mat.Dense // rows x len(Names)
	// Parts, for a data set joined from several files (training and
	// evaluation data), say which file each row came from: part k holds
	// the rows from Parts[k].Start up to the next part's Start, the file's
	// rows in order. Nil: every row is Source's.
	Parts []Part
	// Encoding, when set, says how the columns came from a file's
	// (Table.Prepare): one-hot indicators of categorical columns,
	// missingness indicators, and NaN in the cells to impute. Nil for a
	// table of numbers read as it is (ReadCSV).
	Encoding *Encoding
	// locate names row i's file and row in messages (Table.Prepare sets
	// it); nil: row i+2 of Source, as in a CSV file with a header.
	locate func(i int) (file string, row int)
}

// A Part is one file's block of the rows of a joined Dataset.
type Part struct {
	Source string
	Start  int
}

// Locate returns the file that row i (0-based) of d came from and its row
// there, counted as InputError counts them (the header is row 1; a
// Parquet file's first row is 1), rows that Table.Prepare left out
// counted.
func (d *Dataset) Locate(i int) (source string, row int) {
	if d.locate != nil {
		return d.locate(i)
	}
	source, start := d.Source, 0
	for _, p := range d.Parts {
		if i >= p.Start {
			source, start = p.Source, p.Start
		}
	}
	return source, i - start + 2
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
//
// It also reports, naming the column, a column whose values vary so little
// that the same arithmetic underflows: a response whose largest deviation
// from its mean is below minResponseSpread (its errors' fourth powers, in
// the standard errors, would fall below the smallest normal float64, and
// its squared errors to 0 from about 1e-162: an R2 of -Inf), a feature's
// below minFeatureSpread (its squares, in its standard deviation). A
// column that does not vary at all is left to the checks that refuse a
// constant response and ignore a constant feature. The NaN cells of an
// encoded data set's features are cells to impute, not bad cells.
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
			if math.IsNaN(v) && d.Encoding != nil && j != target {
				continue // a cell to impute (Encoding)
			}
			file, row := d.Locate(i)
			switch {
			case math.IsNaN(v) || math.IsInf(v, 0):
				return &InputError{File: file, Row: row, Column: d.Names[j], Msg: fmt.Sprintf("%g is not a finite number", v)}
			case math.Abs(v) >= limit:
				return &InputError{File: file, Row: row, Column: d.Names[j],
					Msg: fmt.Sprintf("%g is too large in magnitude (%s: with %d rows, keep |values| below %.3g); rescale the column", v, why, n, limit)}
			}
		}
		low, what := minFeatureSpread, "its squares, summed to standardise it, underflow"
		if j == target {
			low, what = minResponseSpread, "the measures' standard errors take the response's errors to the fourth power, which underflows"
		}
		if spread := spreadOf(d.X, j); spread > 0 && spread < low {
			return &InputError{File: d.Source, Column: d.Names[j],
				Msg: fmt.Sprintf("its values vary by at most %.3g around their mean, too little in magnitude (%s: keep the spread above %.3g); rescale the column (multiply it by a power of ten)", spread, what, low)}
		}
	}
	return nil
}

// The least spread (largest deviation from the mean) of a column that
// varies: the fourth (response) or second (feature) power of a thousandth
// of it is a normal float64, so that errors a thousand times smaller than
// the spread keep their precision.
var (
	minResponseSpread = 1e3 * math.Pow(0x1p-1022, 0.25) // about 1.2e-74
	minFeatureSpread  = 1e3 * math.Sqrt(0x1p-1022)      // about 1.5e-151
)

// spreadOf returns the largest absolute deviation of column j of x from its
// mean, over the cells that are not NaN.
func spreadOf(x *mat.Dense, j int) float64 {
	n, _ := x.Dims()
	mean, count := 0.0, 0
	for i := 0; i < n; i++ {
		if v := x.At(i, j); !math.IsNaN(v) {
			mean += v
			count++
		}
	}
	if count == 0 {
		return 0
	}
	mean /= float64(count)
	spread := 0.0
	for i := 0; i < n; i++ {
		if v := x.At(i, j); !math.IsNaN(v) {
			spread = math.Max(spread, math.Abs(v-mean))
		}
	}
	return spread
}

// Column returns the index of the named column. An unknown name is an
// *InputError naming the data set's source and the column, with the
// available names when there are few and the nearest when it looks
// mistyped.
func (d *Dataset) Column(name string) (int, error) {
	for j, s := range d.Names {
		if s == name {
			return j, nil
		}
	}
	return -1, &InputError{File: d.Source, Column: name, Msg: noSuchColumn(name, d.Names)}
}
