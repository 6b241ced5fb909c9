package forest

import (
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin/plugintest"
	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

func TestConformance(t *testing.T) {
	opts := []frameworktest.Option{frameworktest.WithOptions(map[string]string{"trees": "20"})}
	frameworktest.TestBackend(t, Backend{}, opts...)
	t.Run("Plugin", func(t *testing.T) { plugintest.TestBackend(t, Backend{}, opts...) })
}
