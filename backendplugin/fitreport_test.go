package backendplugin

import (
	"context"
	"testing"

	"gonum.org/v1/gonum/mat"
	"google.golang.org/protobuf/proto"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// reportingLinear is the fake linear backend whose models report a
// training (framework.FitReporter).
type reportingLinear struct{ *linear }

var testReport = framework.FitReport{Epochs: 12, StoppedBy: "patience", ValidRows: 30, ValidLoss: 0.25}

func (b reportingLinear) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	m, err := b.linear.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	return reportingModel{m.(*linModel)}, nil
}

type reportingModel struct{ *linModel }

func (reportingModel) FitReport() framework.FitReport { return testReport }

// oldFitServer answers Fit as a plugin from before FitResponse did: with
// an empty message (an Empty and an empty FitResponse are the same bytes).
type oldFitServer struct{ *server }

func (s oldFitServer) Fit(ctx context.Context, req *pb.FitRequest) (*pb.FitResponse, error) {
	if _, err := s.server.Fit(ctx, req); err != nil {
		return nil, err
	}
	return &pb.FitResponse{}, nil
}

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

// TestFitReportCrosses: a model's FitReport reaches the client; a plugin
// whose models do not report, or that predates FitResponse, gives the zero
// report.
func TestFitReportCrosses(t *testing.T) {
	if got := fitReportThrough(t, inProcess(t, "linear", reportingLinear{newLinear()})); got != testReport {
		t.Errorf("FitReport through the plugin: %+v, want %+v", got, testReport)
	}
	if got := fitReportThrough(t, inProcess(t, "linear", newLinear())); got != (framework.FitReport{}) {
		t.Errorf("FitReport of a model without one: %+v, want the zero report", got)
	}
	old := inProcessServer(t, "linear", oldFitServer{newServer(reportingLinear{newLinear()})}, nil)
	if got := fitReportThrough(t, old); got != (framework.FitReport{}) {
		t.Errorf("FitReport from an old plugin: %+v, want the zero report", got)
	}
}

// TestFitResponseWireCompatible: Fit's answer changed from Empty to
// FitResponse; each reads the other's bytes.
func TestFitResponseWireCompatible(t *testing.T) {
	b, err := proto.Marshal(&pb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	var fr pb.FitResponse
	if err := proto.Unmarshal(b, &fr); err != nil || fr.GetReported() {
		t.Errorf("an Empty read as a FitResponse: %v, reported %v; want no error, nothing reported", err, fr.GetReported())
	}
	b, err = proto.Marshal(&pb.FitResponse{Reported: true, Epochs: 3, StoppedBy: "cap", ValidRows: 9, ValidLoss: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(b, &pb.Empty{}); err != nil {
		t.Errorf("a FitResponse read as an Empty (an old client): %v", err)
	}
}
