package framework

import "gonum.org/v1/gonum/mat"

// Dataset is a numeric table with named columns, as read from a CSV file with
// a header row. Source names where it came from (a file path) for messages.
type Dataset struct {
	Source string
	Names  []string
	X      *mat.Dense // rows x len(Names)
}
