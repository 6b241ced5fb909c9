// Package flagmsg words the library's errors and warnings in terms of vi's
// flags: a setting's name becomes the flag that sets it, bad input gets a
// hint naming the flags that would read it, a mistyped flag a
// suggestion.
package flagmsg

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/suggest"
	"github.com/lazyvi/lazyvi/pipeline"
)

// FieldFlags are the flags that set the library's settings, by the names
// that the library's errors give them (framework.FieldError).
var FieldFlags = map[string]string{
	"Config.TrainFrac":         "--train-frac",
	"Config.Backend":           "--backend",
	"Config.CrossFit":          "--crossfit",
	"Config.Repeats":           "--repeats",
	"EstimateOptions.Level":    "--level",
	"EstimateOptions.Ensemble": "--ensemble",
	"EstimateOptions.Shard":    "--shard",
	"EstimateOptions.Check":    "--check",
	"InferOptions.Level":       "--level",
	"InferOptions.Delta":       "--delta",
	"InferOptions.Perturb":     "--perturb",

	"shapley.RunOptions.Subsets": "--subsets",
	"shapley.Options.Level":      "--level",
	"roar.Options.Fractions":     "--fractions",
}

// choiceFlags are the flags that take the choices of the library's
// settings, by the names that its errors give them (framework.ChoiceError).
var choiceFlags = map[string]string{
	"inference":  "--inference",
	"adjustment": "--adjust",
}

// Error returns err's message with the library's name of a setting
// replaced by the flag that sets it: "Config.TrainFrac must be in (0, 1)"
// becomes "--train-frac must be in (0, 1)", "unknown inference "x""
// "unknown --inference "x"".
func Error(err error) string {
	msg := err.Error()
	var fe *framework.FieldError
	if errors.As(err, &fe) {
		if name, ok := FieldFlags[fe.Field]; ok {
			msg = strings.Replace(msg, fe.Error(), name+" "+fe.Msg, 1)
		}
	}
	var ce *framework.ChoiceError
	if errors.As(err, &ce) {
		if name, ok := choiceFlags[ce.Setting]; ok {
			cli := *ce
			cli.Setting = name
			msg = strings.Replace(msg, ce.Error(), cli.Error(), 1)
		}
	}
	// Advice on the flags for input errors that some flags would avoid.
	switch {
	case errors.Is(err, pipeline.ErrTooFewSplitRows):
		msg += " (give more rows, a smaller --train-frac, or --inference plain)"
	case errors.Is(err, pipeline.ErrWholeRun):
		msg += " (written without --shard)"
	}
	return msg
}

// adviceFlags word the library's advice at the end of a report's warnings
// (pipeline.Report.Warnings) as the flags that follow it.
var adviceFlags = []struct {
	advice *regexp.Regexp
	flags  string
}{
	{regexp.MustCompile(`; consider the (\S+) backend$`), "; consider --backend $1"},
	{regexp.MustCompile(`; raise its epoch cap$`), "; raise --epochs"},
}

// Warnings rewords the advice of the warnings ws in terms of vi's
// flags, in place.
func Warnings(ws []string) {
	for i, w := range ws {
		for _, a := range adviceFlags {
			w = a.advice.ReplaceAllString(w, a.flags)
		}
		ws[i] = w
	}
}

// responseError marks bad input in the response column (--target), whose
// hint differs from a feature's.
type responseError struct{ error }

func (e responseError) Unwrap() error { return e.error }

// InResponse marks err as a responseError when it is an input error in
// column target.
func InResponse(err error, target string) error {
	var ie *dataio.InputError
	if target != "" && errors.As(err, &ie) && ie.Column == target {
		return responseError{err}
	}
	return err
}

// InputHint says what to do about bad input that vi could not read: a
// text column or a missing value in a file read as numbers only, whose
// message does not already name the flags that would read it or say how to
// code a response's classes. It returns "" for other errors.
func InputHint(err error) string {
	if msg := err.Error(); strings.Contains(msg, "--categorical") || strings.Contains(msg, "--missing") || strings.Contains(msg, "code a category's classes") {
		return ""
	}
	col := "the column"
	var ie *dataio.InputError
	if errors.As(err, &ie) && ie.Column != "" {
		col = ie.Column
	}
	var re responseError
	switch {
	case errors.Is(err, dataio.ErrText) && errors.As(err, &re):
		return fmt.Sprintf("if the response %s is a category, code its classes as numbers 0, 1, 2, ... (0 and 1 for two: a binary task)", col)
	case errors.Is(err, dataio.ErrText):
		return "a column of categories is one-hot encoded when most of its cells are words; name an integer-coded or mixed one with --categorical"
	case errors.Is(err, dataio.ErrMissingValue):
		return "drop the rows with missing cells (--missing drop) or impute them from the training rows (--missing impute)"
	}
	return ""
}

// Suggestion is "; did you mean --NAME?" for a parse error of fs that
// names an undefined flag near one of fs's ("--estimator" for
// --estimators), else "".
func Suggestion(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return suggest.DidYouMean(name, names, func(s string) string { return "--" + s })
}
