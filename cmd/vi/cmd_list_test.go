package main

import (
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestCapabilityListMatrixFree: vi backends says which backends give lazy
// matrix-free Jacobian products (the cnn and the mlp), and no other does.
func TestCapabilityListMatrixFree(t *testing.T) {
	const want = "matrix-free Jacobian products"
	for _, name := range []string{"cnn", "mlp", "forest"} {
		b, err := framework.LookupBackend(name)
		if err != nil {
			t.Fatal(err)
		}
		got := capabilityList(b.Capabilities())
		if has := strings.Contains(got, want); has != (name != "forest") {
			t.Errorf("%s: capabilities %q (matrix-free listed: %v)", name, got, has)
		}
	}
}
