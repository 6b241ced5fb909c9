package torch_test

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

// The conformance kit on the plugin process, through the real transport,
// with every capability it declares (persist and matrix-free products
// included).
func TestConformance(t *testing.T) {
	b := sharedBackend(t)
	frameworktest.TestBackend(t, b, frameworktest.WithOptions(map[string]string{"hidden": "16,8", "epochs": "200", "lr": "0.01"}))
}

// A user's module (two tanh layers, testdata/tanh.py) through module=.
func TestConformanceModule(t *testing.T) {
	b := sharedBackend(t)
	frameworktest.TestBackend(t, b, frameworktest.WithOptions(map[string]string{"module": abs(t, "tanh.py"), "epochs": "100", "lr": "0.01"}))
}
