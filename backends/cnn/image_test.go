package cnn

import (
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestParseImageBounds: a shape whose H*W overflows, or exceeds what a
// data set's columns can be, is a usage error, not a negative count of
// pixels or a panic further on.
func TestParseImageBounds(t *testing.T) {
	if h, w, err := ParseImage("4096x4096"); h != 4096 || w != 4096 || err != nil {
		t.Errorf("4096x4096: %d, %d, %v", h, w, err)
	}
	for _, v := range []string{"4x4611686018427387920", "4611686018427387920x4", "3037000500x3037000500", "4097x4096", "9223372036854775807x9223372036854775807"} {
		_, _, err := ParseImage(v)
		if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "more than 16777216 pixels") {
			t.Errorf("%s: %v, want a usage error on the pixels", v, err)
		}
	}
}
