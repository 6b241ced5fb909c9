package mlp

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

func TestConformance(t *testing.T) {
	frameworktest.TestBackend(t, Backend{}, frameworktest.WithOptions(map[string]string{"hidden": "16,8", "epochs": "200", "lr": "0.01"}))
}
