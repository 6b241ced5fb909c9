package main

import (
	"errors"
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
