package framework_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestParseCount: a count is a whole number in its range; anything else
// is a usage error saying which, never "must be >= 1" for 1e9.
func TestParseCount(t *testing.T) {
	if n, err := framework.ParseCount("draws", " 12 ", 1, 100, ""); n != 12 || err != nil {
		t.Errorf("12: %d, %v", n, err)
	}
	for _, c := range []struct{ v, want string }{
		{"1e9", `draws must be a whole number from 1 to 100, got "1e9"`},
		{"2.5", `must be a whole number from 1 to 100, got "2.5"`},
		{"", `got ""`},
		{"0", "draws 0 is out of range: want 1 to 100: why"},
		{"101", "draws 101 is out of range: want 1 to 100: why"},
		{"99999999999999999999", "draws 99999999999999999999 is out of range: want 1 to 100: why"},
		{"-99999999999999999999", "is out of range"},
	} {
		_, err := framework.ParseCount("draws", c.v, 1, 100, "why")
		if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a usage error with %q", c.v, err, c.want)
		}
	}
}
