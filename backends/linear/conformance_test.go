package linear

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

func TestConformance(t *testing.T) {
	frameworktest.TestBackend(t, Backend{})
	t.Run("ridge", func(t *testing.T) {
		frameworktest.TestBackend(t, Backend{}, frameworktest.WithOptions(map[string]string{"ridge": "2"}), frameworktest.WithoutPlugin())
	})
}
