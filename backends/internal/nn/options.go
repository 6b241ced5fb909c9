package nn

import (
	"sort"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// Training holds the training options every network backend has, with the
// backend's defaults until parsed.
type Training struct {
	Epochs   int     // maximum number of epochs
	Patience int     // early stopping: epochs without progress
	Tol      float64 // relative improvement of the loss that is progress
	LR       float64 // Adam learning rate
	Batch    int     // minibatch size, capped at the training rows
	Valid    float64 // share of the training rows held out for early stopping (see SplitValid)
}

// DefaultValid is the validation share of every network backend: 20% of
// the training rows (SplitValid). The slice scores the candidate
// architectures as well as the epochs, and the choice among candidates is
// only as good as the slice that scores them: a smaller one chooses worse.
const DefaultValid = 0.2

// ValidUsage is the help text of the valid option.
const ValidUsage = "share of the training rows held out (seeded) as the validation slice that early stopping watches; the best epoch on it is kept (0: watch the training loss)"

// IsTrainingKey reports whether k is a key that Training.Set parses:
// epochs, patience, tol, lr, batch or valid.
func IsTrainingKey(k string) bool {
	switch k {
	case "epochs", "patience", "tol", "lr", "batch", "valid":
		return true
	}
	return false
}

// Set parses the value v of training option k (see IsTrainingKey) for
// backend name.
func (t *Training) Set(name, k, v string) error {
	var err error
	switch k {
	case "epochs":
		t.Epochs, err = PositiveInt(name, k, v)
	case "patience":
		t.Patience, err = PositiveInt(name, k, v)
	case "batch":
		t.Batch, err = PositiveInt(name, k, v)
	case "tol":
		t.Tol, err = Float(name, k, v, false)
	case "lr":
		t.LR, err = Float(name, k, v, true)
	case "valid":
		t.Valid, err = Float(name, k, v, false)
		if err == nil && t.Valid > 0.5 {
			err = framework.Usagef("%s: option valid: %s is above 0.5 (want a share such as 0.15, or 0)", name, v)
		}
	default:
		panic("nn: Training.Set: not a training option: " + k)
	}
	return err
}

// EachOption calls set with every key of opts and its value, space
// trimmed, in sorted key order (so that the first error reported does not
// depend on map iteration order), and returns the first error.
func EachOption(opts map[string]string, set func(k, v string) error) error {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := set(k, strings.TrimSpace(opts[k])); err != nil {
			return err
		}
	}
	return nil
}

// UnknownOption is the usage error for an option key k that backend name
// does not know; known lists the ones it does.
func UnknownOption(name, k string, known []framework.OptionInfo) error {
	names := make([]string, len(known))
	for i, o := range known {
		names[i] = o.Name
	}
	return framework.Usagef("%s: unknown option %q (known: %s)", name, k, strings.Join(names, ", "))
}

// PositiveInt parses the value v of option k as an integer >= 1.
func PositiveInt(name, k, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, framework.Usagef("%s: option %s: bad value %q (want a positive integer)", name, k, v)
	}
	return n, nil
}

// Float parses the value v of option k as a finite decimal number >= 0
// (dataio.ParseNumber: not Go's hexadecimal or digit separators);
// positive additionally rejects zero.
func Float(name, k, v string, positive bool) (float64, error) {
	f, err := dataio.ParseNumber(v)
	if err != nil || f < 0 || (positive && f == 0) {
		want := "a finite number >= 0"
		if positive {
			want = "a finite number > 0"
		}
		return 0, framework.Usagef("%s: option %s: bad value %q (want %s)", name, k, v, want)
	}
	return f, nil
}

// Widths parses the value v of option k, a non-empty comma-separated list
// of positive layer widths; example is a good value for the error.
func Widths(name, k, v, example string) ([]int, error) {
	parts := strings.Split(v, ",")
	out := make([]int, len(parts))
	for i, s := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, framework.Usagef("%s: option %s: bad width %q in %q (want positive integers such as %q)", name, k, s, v, example)
		}
		out[i] = n
	}
	return out, nil
}
