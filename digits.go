package lazyvi

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/lazyvi/lazyvi/dataio"
)

// digitsCSV is the UCI optical recognition of handwritten digits test set
// as scikit-learn bundles it (load_digits): 1,797 images of 8 x 8 pixels
// with values 0..16, columns px_r_c in row-major order, and the label
// "digit" 0..9.
//
//go:embed data/digits.csv
var digitsCSV []byte

// DigitsSource is the Source of the data set Digits returns.
const DigitsSource = "digits.csv (built-in)"

// Digits returns a new copy of the built-in digits data: an image set for
// the cnn backend (image 8x8), as vi experiment roar-images uses it.
func Digits() (*dataio.Dataset, error) {
	d, err := dataio.ReadCSV(bytes.NewReader(digitsCSV), DigitsSource)
	if err != nil {
		return nil, fmt.Errorf("built-in data: %w", err)
	}
	return d, nil
}
