package measures

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// Four samples, three classes; the third row's argmax is wrong, the fourth
// ties classes 0 and 1 (the tie goes to 0) against label 2.
var (
	mcY    = []float64{0, 2, 1, 2}
	mcPred = mat.NewDense(4, 3, []float64{
		0.7, 0.2, 0.1,
		0.1, 0.3, 0.6,
		0.5, 0.4, 0.1,
		0.4, 0.4, 0.2,
	})
)

func TestMulticlassAccuracyHand(t *testing.T) {
	s, err := Accuracy().Evaluate(mcY, mcPred)
	if err != nil {
		t.Fatal(err)
	}
	if s.Value != 0.5 {
		t.Errorf("accuracy: want 0.5, got %v", s.Value)
	}
	want := []float64{0.5, 0.5, -0.5, -0.5}
	for i, v := range want {
		if s.Influence[i] != v {
			t.Errorf("influence %d: want %v, got %v", i, v, s.Influence[i])
		}
	}
}

func TestMulticlassLogLossHand(t *testing.T) {
	s, err := LogLoss().Evaluate(mcY, mcPred)
	if err != nil {
		t.Fatal(err)
	}
	// -log 0.7, -log 0.6, -log 0.4, -log 0.2 (the label's probability).
	l := []float64{0.35667494393873245, 0.5108256237659907, 0.916290731874155, 1.6094379124341003}
	mean := 0.8483073030032446
	if math.Abs(s.Value+mean) > 1e-14 {
		t.Errorf("logloss: want %v, got %v", -mean, s.Value)
	}
	for i, v := range l {
		if math.Abs(s.Influence[i]-(mean-v)) > 1e-14 {
			t.Errorf("influence %d: want %v, got %v", i, mean-v, s.Influence[i])
		}
	}
	// A zero probability for the label is clipped, not -Inf.
	z := mat.NewDense(1, 3, []float64{1, 0, 0})
	s, err = LogLoss().Evaluate([]float64{1}, z)
	if err != nil {
		t.Fatal(err)
	}
	if want := math.Log(ProbEps); math.Abs(s.Value-want) > 1e-12 {
		t.Errorf("clipped logloss: want %v, got %v", want, s.Value)
	}
}

func TestMulticlassSupportsAndErrors(t *testing.T) {
	for _, m := range []framework.Measure{Accuracy(), LogLoss()} {
		if !m.Supports(framework.Multiclass) {
			t.Errorf("%s does not support multiclass", m.Name())
		}
		if _, err := m.Evaluate([]float64{0, 3, 1, 2}, mcPred); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%s with label 3 of 3 classes: want a usage error, got %v", m.Name(), err)
		}
		bad := mat.DenseCopyOf(mcPred)
		bad.Set(1, 1, 1.5)
		if _, err := m.Evaluate(mcY, bad); err == nil {
			t.Errorf("%s with a probability 1.5: want an error", m.Name())
		}
		if _, err := m.Evaluate(mcY[:3], mcPred); err == nil {
			t.Errorf("%s with 4 predictions for 3 responses: want an error", m.Name())
		}
	}
	for _, m := range []framework.Measure{MSE(), R2(), AUC()} {
		if m.Supports(framework.Multiclass) {
			t.Errorf("%s supports multiclass", m.Name())
		}
	}
}
