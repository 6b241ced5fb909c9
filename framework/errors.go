package framework

import (
	"errors"
	"fmt"
)

// ErrUsage marks errors caused by the user's input or flags (exit code 2 in
// the CLI), as opposed to failures of the machinery.
var ErrUsage = errors.New("usage error")

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

func FieldErrorf(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ChoiceError is a usage error for a value that names none of a setting's
// choices: "unknown inference "x" (want split, plain or perturbed)".
// Setting names the setting so that a tool can say it in its own terms (vi
// names the flag that takes it).
type ChoiceError struct {
	Setting string // "inference", "adjustment", "task"
	Value   string // what was given
	Want    string // the choices: "split, plain or perturbed"
}

func (e *ChoiceError) Error() string {
	return fmt.Sprintf("unknown %s %q (want %s)", e.Setting, e.Value, e.Want)
}

// Is makes every ChoiceError match ErrUsage.
func (e *ChoiceError) Is(target error) bool { return target == ErrUsage }

// ErrNonFinite marks a result that came out NaN or infinite: the arithmetic
// overflowed (extreme data, or a model that diverged). It is not a usage
// error, and running again gives the same.
var ErrNonFinite = errors.New("non-finite result")
