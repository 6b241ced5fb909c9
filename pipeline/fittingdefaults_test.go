package pipeline_test

import (
	"slices"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// TestFittingDefaults: where the backend cannot run the first estimator, the
// reference takes its place at the head of the list and the note says
// what the backend lacks and what runs instead; where it can, the list is
// FittingEstimators'.
func TestFittingDefaults(t *testing.T) {
	ests, err := pipeline.LookupEstimators("lazy-es,dropout")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := pipeline.LookupEstimators("retrain")
	if err != nil {
		t.Fatal(err)
	}
	out, note := pipeline.FittingDefaults("b", framework.Capabilities{}, ests, "lazy-es", ref[0])
	want := "backend b has no warm starts: estimating with retrain, dropout (retrain in lazy-es's place: a model trained without each feature)"
	if !slices.Equal(pipeline.EstimatorNames(out), []string{"retrain", "dropout"}) || note != want {
		t.Errorf("no warm starts: %v, note %q; want [retrain dropout], %q", pipeline.EstimatorNames(out), note, want)
	}
	out, note = pipeline.FittingDefaults("b", framework.Capabilities{WarmStart: true}, ests, "lazy-es", ref[0])
	if !slices.Equal(pipeline.EstimatorNames(out), []string{"lazy-es", "dropout"}) || note != "" {
		t.Errorf("warm starts: %v, note %q; want the list as given", pipeline.EstimatorNames(out), note)
	}
}
