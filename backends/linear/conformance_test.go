package linear

import (
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin/plugintest"
	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

func TestConformance(t *testing.T) {
	frameworktest.TestBackend(t, Backend{})
	t.Run("Plugin", func(t *testing.T) { plugintest.TestBackend(t, Backend{}) })
	t.Run("ridge", func(t *testing.T) {
		frameworktest.TestBackend(t, Backend{}, frameworktest.WithOptions(map[string]string{"ridge": "2"}))
	})
}
