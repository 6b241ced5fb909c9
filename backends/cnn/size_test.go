package cnn

import (
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestAbsurdSizeRefused: filters or widths whose network cannot fit in the
// machine's memory are a one-line usage error naming the options.
func TestAbsurdSizeRefused(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		ok   bool
	}{
		{map[string]string{"hidden": "100000000000"}, false},
		{map[string]string{"filters": "100000000000"}, false},
		{map[string]string{"hidden": "1024"}, true},
	} {
		_, err := NewModel(framework.ModelSpec{Task: framework.Regression, Inputs: 64, Seed: 1, Options: c.opts})
		switch {
		case c.ok && err != nil:
			t.Errorf("%v: %v", c.opts, err)
		case !c.ok && (err == nil || !errors.Is(err, framework.ErrUsage) || !strings.HasPrefix(err.Error(), "cnn: options filters ") || strings.Contains(err.Error(), "\n")):
			t.Errorf("%v: err %v, want a one-line usage error naming the options", c.opts, err)
		}
	}
}
