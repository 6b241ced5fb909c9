package backendplugin

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// reportingLinear is the fake linear backend whose models report a
// training (framework.FitReporter).
type reportingLinear struct{ *linear }

var testReport = framework.FitReport{Epochs: 12, StoppedBy: "patience", ValidRows: 30, ValidLoss: 0.25,
	Loaded: true, Architecture: "linear, 2 weights"}

func (b reportingLinear) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.linear.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return reportingModel{m.(*linModel)}, nil
}

type reportingModel struct{ *linModel }

func (reportingModel) FitReport() framework.FitReport { return testReport }

func fitReportThrough(t *testing.T, r *remote) framework.FitReport {
	t.Helper()
	m, err := r.New(context.Background(), framework.ModelSpec{Task: framework.Regression, Inputs: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer framework.Release(m)
	x := mat.NewDense(4, 2, []float64{1, 0, 0, 1, 1, 1, 2, 1})
	if err := m.Fit(context.Background(), x, []float64{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	return framework.FitReportOf(m)
}

// TestFitReportCrosses: a model's FitReport reaches the client, loaded
// and architecture too; a model that does not report gives the zero
// report.
func TestFitReportCrosses(t *testing.T) {
	if got := fitReportThrough(t, inProcess(t, "linear", reportingLinear{newLinear()})); got != testReport {
		t.Errorf("FitReport through the plugin: %+v, want %+v", got, testReport)
	}
	if got := fitReportThrough(t, inProcess(t, "linear", newLinear())); got != (framework.FitReport{}) {
		t.Errorf("FitReport of a model without one: %+v, want the zero report", got)
	}
}
