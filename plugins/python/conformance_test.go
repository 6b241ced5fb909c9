package python_test

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

// The conformance kit on the example backend's plugin process, through the
// real transport, with every capability it declares (persist and the
// Jacobian products the kit derives included), without and with a ridge
// penalty.
func TestConformance(t *testing.T) {
	b := start(t).Backend()
	t.Run("ols", func(t *testing.T) { frameworktest.TestBackend(t, b) })
	t.Run("ridge", func(t *testing.T) {
		frameworktest.TestBackend(t, b, frameworktest.WithOptions(map[string]string{"ridge": "2.5"}))
	})
}
