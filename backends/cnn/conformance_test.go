package cnn

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

func TestConformance(t *testing.T) {
	frameworktest.TestBackend(t, Backend{},
		frameworktest.WithSize(96, 16), // a 4x4 image
		frameworktest.WithOptions(map[string]string{"epochs": "15", "filters": "4", "hidden": "8"}))
}
