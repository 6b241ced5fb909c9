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
}

func (e *InputError) Error() string {
	s := e.File
	if e.Row > 0 {
		s += fmt.Sprintf(": row %d", e.Row)
	}
	if e.Column != "" {
		s += fmt.Sprintf(", column %q", e.Column)
	}
	return s + ": " + e.Msg
}

// Is makes every InputError match ErrUsage.
func (e *InputError) Is(target error) bool { return target == ErrUsage }

// Usagef returns an error wrapping ErrUsage, formatted by fmt.Errorf: a
// %w verb wraps its operand too.
func Usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

type usageError struct{ err error }

func (e *usageError) Error() string        { return e.err.Error() }
func (e *usageError) Is(target error) bool { return target == ErrUsage }
func (e *usageError) Unwrap() error        { return errors.Unwrap(e.err) }
