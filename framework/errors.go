package framework

import (
	"errors"
	"fmt"
)

// ErrUsage marks errors caused by the user's input or flags (exit code 2 in
// the CLI), as opposed to failures of the machinery.
var ErrUsage = errors.New("usage error")

// InputError locates bad input: the file and, where they apply, the 1-based
// row (counting the header as row 1) and the column name.
type InputError struct {
	File   string
	Row    int    // 0 when not applicable
	Column string // "" when not applicable
	Msg    string
	// Err, when set, is what went wrong, for errors.Is (ErrMissingValue,
	// ErrText); Msg says it.
	Err error
}

func (e *InputError) Error() string {
	s := e.File
	if e.Row > 0 {
		s += fmt.Sprintf(": row %d", e.Row)
	}
	if e.Column != "" {
		s += ", column " + quote(e.Column)
	}
	return s + ": " + e.Msg
}

// Is makes every InputError match ErrUsage.
func (e *InputError) Is(target error) bool { return target == ErrUsage }

// Unwrap returns Err.
func (e *InputError) Unwrap() error { return e.Err }

// Usagef returns an error wrapping ErrUsage, formatted by fmt.Errorf: a
// %w verb wraps its operand too.
func Usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

type usageError struct{ err error }

func (e *usageError) Error() string        { return e.err.Error() }
func (e *usageError) Is(target error) bool { return target == ErrUsage }
func (e *usageError) Unwrap() error        { return errors.Unwrap(e.err) }

// FieldError is a usage error in one field of the library's settings
// (Config, EstimateOptions, InferOptions). Field names it as Go code does,
// "Config.TrainFrac", so that a tool can say it in its own terms: vi maps it
// to the flag that sets it (--train-frac).
type FieldError struct {
	Field string // "Config.TrainFrac", "EstimateOptions.Level", ...
	Msg   string // what is wrong: "must be at least 2, got 1"
}

func (e *FieldError) Error() string { return e.Field + " " + e.Msg }

// Is makes every FieldError match ErrUsage.
func (e *FieldError) Is(target error) bool { return target == ErrUsage }

func fieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ErrNonFinite marks a result that came out NaN or infinite: the arithmetic
// overflowed (extreme data, or a model that diverged). It is not a usage
// error, and running again gives the same.
var ErrNonFinite = errors.New("non-finite result")

// nonFinite is the ErrNonFinite error for what (a measure, a VI), which is v.
func nonFinite(what string, v float64) error {
	return fmt.Errorf("%s is %g: %w (extreme values in the data, or a model that diverged)", what, v, ErrNonFinite)
}
