package estimators_test

import (
	"context"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// simProblem simulates the named setting (n rows, correlation rho, seed)
// and prepares its problem on backend be (named name) with that seed; the
// problem is closed when the test ends.
func simProblem(t *testing.T, setting string, n int, rho float64, seed int64, be framework.Backend, name string) *framework.Problem {
	t.Helper()
	sim, err := simulate.Generate(setting, n, rho, seed)
	if err != nil {
		t.Fatal(err)
	}
	d := &dataio.Dataset{Source: setting, Names: sim.Names, X: sim.X}
	p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: be, BackendName: name, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
