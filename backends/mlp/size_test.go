package mlp

import (
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestAbsurdWidthRefused: a width whose network cannot fit in the
// machine's memory is a one-line usage error naming the option, before any
// of it is allocated; large networks that fit are built.
func TestAbsurdWidthRefused(t *testing.T) {
	for _, c := range []struct {
		inputs int
		hidden string
		ok     bool
	}{
		{10, "100000000", false},
		{100, "50,100000000000", false},
		{100, "200,100", true},
		{1000, "1024", true},
		{100, "1024,1024,1024", true},
	} {
		_, err := NewModel(framework.ModelSpec{Task: framework.Regression, Inputs: c.inputs, Seed: 1, Options: map[string]string{"hidden": c.hidden}})
		switch {
		case c.ok && err != nil:
			t.Errorf("hidden %s on %d inputs: %v", c.hidden, c.inputs, err)
		case !c.ok && (err == nil || !errors.Is(err, framework.ErrUsage) || !strings.HasPrefix(err.Error(), "mlp: option hidden "+c.hidden+": a network of ") || strings.Contains(err.Error(), "\n")):
			t.Errorf("hidden %s on %d inputs: err %v, want a one-line usage error naming option hidden", c.hidden, c.inputs, err)
		}
	}
}
