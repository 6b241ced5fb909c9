package cnn

import (
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin/plugintest"
	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

func TestConformance(t *testing.T) {
	opts := []frameworktest.Option{
		frameworktest.WithSize(96, 16), // a 4x4 image
		frameworktest.WithOptions(map[string]string{"epochs": "15", "filters": "4", "hidden": "8"}),
	}
	frameworktest.TestBackend(t, Backend{}, opts...)
	t.Run("Plugin", func(t *testing.T) { plugintest.TestBackend(t, Backend{}, opts...) })
}
