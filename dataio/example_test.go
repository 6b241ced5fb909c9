package dataio_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
)

// A data set read from CSV text: a header of names, then numbers; groups
// of columns named as vi's --groups takes them.
func ExampleReadCSV() {
	csv := "x1,x2,x3,y\n1,2,0.5,3.1\n2,1,0.25,2.9\n3,0,1,4.2\n"
	d, err := dataio.ReadCSV(strings.NewReader(csv), "small.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, c := d.X.Dims()
	fmt.Println(d.Names, r, "rows,", c, "columns")
	groups, err := dataio.ParseGroups("a=x1,x2")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The features over the design matrix: the columns but the response.
	feats, err := dataio.ResolveFeatures(d.Names[:3], "y", groups, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range feats {
		fmt.Println(f.Name, f.Columns)
	}
	// Output:
	// [x1 x2 x3 y] 3 rows, 4 columns
	// a [0 1]
	// x3 [2]
}

// Bad input is an *InputError naming the file, the row (the header is row
// 1) and the column.
func ExampleInputError() {
	_, err := dataio.ReadCSV(strings.NewReader("x1,y\n1,2\nfoo,3\n"), "bad.csv")
	var ie *dataio.InputError
	if errors.As(err, &ie) {
		fmt.Println(ie.File, ie.Row, ie.Column)
	}
	fmt.Println(err)
	// Output:
	// bad.csv 3 x1
	// bad.csv: row 3, column "x1": not a number: "foo"
}
