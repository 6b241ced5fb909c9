package forest

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

func TestConformance(t *testing.T) {
	frameworktest.TestBackend(t, Backend{}, frameworktest.WithOptions(map[string]string{"trees": "20"}))
}
