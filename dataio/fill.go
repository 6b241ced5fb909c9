package dataio

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// A Fill is what one set of training rows teaches about an encoded data
// set's feature columns: the value each column's missing (NaN) cells take
// (Values; 0 for a column without them), and the indicator columns of
// categories those rows lack (Unseen). Apply uses it on the training rows
// and on the rows they are evaluated on alike.
type Fill struct {
	Values []float64
	Unseen []int
}

// FitFill fits the Fill of the training rows x, whose columns are the
// feature columns names (a data set's columns without the response, in
// order): a numeric column's missing cells take the mean of its cells in
// x, a categorical column's the most frequent category in x (the first in
// the Encoding's order on a tie); the indicators of categories that no row
// of x has are Unseen, so that an evaluation row of such a category has
// all its column's indicators 0, as a row of no category the model knows.
// A column missing in every row of x is an *InputError naming source and
// the column. A nil Encoding fits nothing (nil, nil).
func (e *Encoding) FitFill(source string, names []string, x *mat.Dense) (*Fill, error) {
	if e == nil {
		return nil, nil
	}
	index := make(map[string]int, len(names))
	for j, n := range names {
		index[n] = j
	}
	f := &Fill{Values: make([]float64, len(names))}
	rows, _ := x.Dims()
	for _, c := range e.Columns {
		cols := make([]int, 0, len(c.Columns))
		for _, n := range c.Columns {
			j, ok := index[n]
			if !ok {
				return nil, fmt.Errorf("encoding: column %s of %s is not a feature column", Quote(n), Quote(c.Name))
			}
			cols = append(cols, j)
		}
		values := cols
		if c.Missing != "" {
			values = cols[:len(cols)-1]
		}
		sums := make([]float64, len(values))
		present := 0
		for i := 0; i < rows; i++ {
			if math.IsNaN(x.At(i, values[0])) {
				continue
			}
			present++
			for k, j := range values {
				sums[k] += x.At(i, j)
			}
		}
		if present == 0 && c.Missing != "" {
			return nil, &InputError{File: source, Column: c.Name, Msg: fmt.Sprintf("missing in every one of the %d training rows: nothing to impute it from", rows)}
		}
		if !c.Categorical() {
			if c.Missing != "" {
				f.Values[values[0]] = sums[0] / float64(present)
			}
			continue
		}
		mode := 0
		for k, s := range sums {
			if s > sums[mode] {
				mode = k
			}
			if s == 0 {
				f.Unseen = append(f.Unseen, values[k])
			}
		}
		if c.Missing != "" {
			f.Values[values[mode]] = 1
		}
	}
	return f, nil
}

// Apply fills x's missing (NaN) cells and zeroes its Unseen indicator
// columns, in place. A nil Fill changes nothing.
func (f *Fill) Apply(x *mat.Dense) {
	if f == nil {
		return
	}
	rows, cols := x.Dims()
	for i := 0; i < rows; i++ {
		r := x.RawRowView(i)
		for j := 0; j < cols; j++ {
			if math.IsNaN(r[j]) {
				r[j] = f.Values[j]
			}
		}
		for _, j := range f.Unseen {
			r[j] = 0
		}
	}
}
