package framework

import (
	"strconv"
	"strings"
)

// ParseCount reads v, the value of the count setting name, as a whole
// number from lo to hi. Anything else is a usage error naming the setting
// and the range: a number that is not whole or written with an exponent
// (1e9, 2.5), one too large for an int, or one outside the range, where
// why (if any) says what bounds it.
func ParseCount(name, v string, lo, hi int, why string) (int, error) {
	s := strings.TrimSpace(v)
	n, err := strconv.Atoi(s)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, countError(name, v, lo, hi, why)
		}
		return 0, Usagef("%s must be a whole number from %d to %d, got %q", name, lo, hi, v)
	}
	if n < lo || n > hi {
		return 0, countError(name, v, lo, hi, why)
	}
	return n, nil
}

func countError(name, v string, lo, hi int, why string) error {
	if why != "" {
		why = ": " + why
	}
	return Usagef("%s %s is out of range: want %d to %d%s", name, strings.TrimSpace(v), lo, hi, why)
}
