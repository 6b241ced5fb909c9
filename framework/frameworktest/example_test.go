package frameworktest_test

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

// Check runs the conformance checks outside a test. A backend's own tests
// call TestBackend instead:
//
//	func TestConformance(t *testing.T) { frameworktest.TestBackend(t, linear.Backend{}) }
func ExampleCheck() {
	fmt.Println("linear:", frameworktest.Check(linear.Backend{}))

	// A backend whose models predict the mean response runs, but has no
	// skill: the fit check fails.
	err := frameworktest.Check(meanBackend{})
	fmt.Println("mean:", strings.Join(failedChecks(err), ", "))
	// Output:
	// linear: <nil>
	// mean: Regression
}

// failedChecks returns the names of the checks that err reports failed.
func failedChecks(err error) []string {
	seen := map[string]bool{}
	for _, line := range strings.Split(err.Error(), "\n") {
		name, _, _ := strings.Cut(line, ": ")
		seen[name] = true
	}
	var names []string
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// meanBackend's models predict the mean of the training responses.
type meanBackend struct{}

func (meanBackend) Capabilities() framework.Capabilities { return framework.Capabilities{} }

func (meanBackend) Options() []framework.OptionInfo { return nil }

func (meanBackend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	if spec.Inputs < 1 {
		return nil, framework.Usagef("mean: no inputs")
	}
	for name := range spec.Options {
		return nil, framework.Usagef("mean: unknown option %q", name)
	}
	return &meanModel{}, nil
}

type meanModel struct{ mean float64 }

func (m *meanModel) Fit(_ context.Context, _ mat.Matrix, y []float64) error {
	for _, v := range y {
		m.mean += v / float64(len(y))
	}
	return nil
}

func (m *meanModel) Predict(_ context.Context, x mat.Matrix) (*mat.Dense, error) {
	n, _ := x.Dims()
	p := mat.NewDense(n, 1, nil)
	for i := range n {
		p.Set(i, 0, m.mean)
	}
	return p, nil
}
