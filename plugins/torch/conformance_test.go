package torch_test

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

// The kit's Plugin subtest serves a backend over the transport in this
// process; here the backend already is the Python process behind the real
// transport, so it is left out (WithoutPlugin).

func TestConformance(t *testing.T) {
	b := sharedBackend(t)
	frameworktest.TestBackend(t, b, frameworktest.WithoutPlugin(),
		frameworktest.WithOptions(map[string]string{"hidden": "16,8", "epochs": "200", "lr": "0.01"}))
}

// A user's module (two tanh layers, testdata/tanh.py) through module=.
func TestConformanceModule(t *testing.T) {
	b := sharedBackend(t)
	frameworktest.TestBackend(t, b, frameworktest.WithoutPlugin(),
		frameworktest.WithOptions(map[string]string{"module": abs(t, "tanh.py"), "epochs": "100", "lr": "0.01"}))
}
