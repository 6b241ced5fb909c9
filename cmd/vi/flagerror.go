package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// fieldFlags are the flags that set the library's settings, by the names
// that the library's errors give them (framework.FieldError).
var fieldFlags = map[string]string{
	"Config.TrainFrac":         "--train-frac",
	"Config.Backend":           "--backend",
	"Config.CrossFit":          "--crossfit",
	"Config.Repeats":           "--repeats",
	"EstimateOptions.Level":    "--level",
	"EstimateOptions.Ensemble": "--ensemble",
	"InferOptions.Level":       "--level",
	"InferOptions.Delta":       "--delta",
	"InferOptions.Perturb":     "--perturb",

	"shapley.RunOptions.Subsets": "--subsets",
	"shapley.Options.Level":      "--level",
	"roar.Options.Fractions":     "--fractions",
}

// flagError returns err's message with the library's name of a setting
// replaced by the flag that sets it: "Config.TrainFrac must be in (0, 1)"
// becomes "--train-frac must be in (0, 1)".
func flagError(err error) string {
	msg := err.Error()
	var fe *framework.FieldError
	if errors.As(err, &fe) {
		if name, ok := fieldFlags[fe.Field]; ok {
			msg = strings.Replace(msg, fe.Error(), name+" "+fe.Msg, 1)
		}
	}
	return msg
}

// inputHint says what to do about bad input that vi could not read: a
// text column (encode it), a missing value (drop or impute the rows).
// It returns "" for other errors.
func inputHint(err error) string {
	col := "the column"
	var ie *framework.InputError
	if errors.As(err, &ie) && ie.Column != "" {
		col = ie.Column
	}
	switch {
	case errors.Is(err, framework.ErrText):
		return fmt.Sprintf("vi reads numbers only: if %s is a category, replace it by 0/1 columns %s_<category>, one per category (e.g. pandas.get_dummies), and add --groups onehot to estimate their importance together (docs/inference.md)", col, col)
	case errors.Is(err, framework.ErrMissingValue):
		return "vi needs a number in every cell: drop the rows with missing values (e.g. pandas dropna) or impute them before vi reads the file"
	}
	return ""
}
