package lazyvi_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// choiceData draws n rows of p standard normal features and a response
// from y(x, rng): the last column.
func choiceData(n, p int, seed uint64, y func(x []float64, rng *rand.Rand) float64) *dataio.Dataset {
	rng := rand.New(rand.NewPCG(seed, 42))
	d := &dataio.Dataset{Source: "choice.csv", X: mat.NewDense(n, p+1, nil)}
	for j := 0; j < p; j++ {
		d.Names = append(d.Names, "x"+string(rune('1'+j)))
	}
	d.Names = append(d.Names, "y")
	row := make([]float64, p+1)
	for i := 0; i < n; i++ {
		for j := 0; j < p; j++ {
			row[j] = rng.NormFloat64()
		}
		row[p] = y(row[:p], rng)
		d.X.SetRow(i, row)
	}
	return d
}

// TestDefaultChoosesKind: the default full model (lazyvi.Run without a
// backend) is logistic regression on a linear-logistic truth, where the
// network's cross-validated logloss is higher than the linear model's,
// and the network on an interaction, where it beats least squares by
// many standard errors of the difference. The margins: the linear model
// must be better outright (at most 0 standard errors, where the rule
// allows 1), and the network better by at least 6 (the drawn data's
// differences are -3.5 and +9.5 standard errors).
func TestDefaultChoosesKind(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	logistic := func(x []float64, rng *rand.Rand) float64 {
		eta := 1.5*x[0] - x[1] + 0.5*x[2]
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			return 1
		}
		return 0
	}
	interaction := func(x []float64, rng *rand.Rand) float64 {
		return 2*x[0]*x[1] + x[2] + 0.5*rng.NormFloat64()
	}
	for _, c := range []struct {
		name   string
		d      *dataio.Dataset
		want   string
		margin float64 // the chosen side's distance from the rule, in standard errors
	}{
		{"linear-logistic", choiceData(600, 5, 7, logistic), "linear", 1},
		{"interaction", choiceData(600, 5, 8, interaction), "mlp", 5},
	} {
		cfg := pipeline.Config{Seed: 11, CrossFit: 3, Repeats: 1}
		rep, err := lazyvi.Run(context.Background(), c.d, lazyvi.Options{Config: cfg, Estimators: []framework.Estimator{estimators.Dropout{}}})
		if err != nil {
			t.Fatal(err)
		}
		ch := rep.Full.Choice
		if ch == nil || len(ch.Kinds) != 2 || ch.Kinds[1].Name != "linear" {
			t.Fatalf("%s: choice %+v, want mlp against linear", c.name, ch)
		}
		k := ch.Kinds[1]
		z := k.Diff / k.DiffSE // the linear model's loss above the network's, in standard errors
		t.Logf("%s: %s chosen, %s %.4g vs %.4g, difference %.3g (se %.3g, %.1f se)", c.name, ch.Chosen, ch.Measure, ch.Kinds[0].Loss, k.Loss, k.Diff, k.DiffSE, z)
		if ch.Chosen != c.want || rep.Backend != c.want {
			t.Errorf("%s: chose %s (backend %s), want %s", c.name, ch.Chosen, rep.Backend, c.want)
		}
		if c.want == "linear" && z > 1-c.margin || c.want == "mlp" && z < 1+c.margin {
			t.Errorf("%s: the difference is %.2f standard errors, within %g of the rule's 1", c.name, z, c.margin)
		}
		if len(rep.Warnings) != 0 {
			t.Errorf("%s: warnings %q", c.name, rep.Warnings)
		}
	}
}

// TestDefaultRealData: on the built-in diabetes data and breast_cancer.csv
// the default's full model is not worse than the linear model beyond the
// standard error of the difference (the linear model is chosen on both),
// and no warning says it is; on diabetes lazy finds bmi and s5 (p < 0.05),
// as the README's first command shows; on breast_cancer the report has
// the full model's accuracy and AUC beside its logloss.
func TestDefaultRealData(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	diabetes, err := lazyvi.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	cancer, err := dataio.LoadCSV(context.Background(), "testdata/breast_cancer.csv")
	if err != nil {
		t.Fatal(err)
	}
	lz, err := framework.LookupEstimator("lazy")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*dataio.Dataset{diabetes, cancer} {
		rep, err := lazyvi.Run(context.Background(), d, lazyvi.Options{Config: pipeline.Config{Seed: 1}, Estimators: []framework.Estimator{lz}})
		if err != nil {
			t.Fatal(err)
		}
		ch := rep.Full.Choice
		if ch == nil || len(ch.Kinds) != 2 {
			t.Fatalf("%s: model choice %+v, want the network against the linear model", d.Source, ch)
		}
		k := ch.Kinds[1]
		t.Logf("%s: %s chosen: %s %s %.4g, linear %.4g (se %.3g)", d.Source, ch.Chosen, ch.Measure, ch.Kinds[0].Name, ch.Kinds[0].Loss, k.Loss, k.DiffSE)
		if ch.Chosen != "linear" && !(k.Diff > k.DiffSE) || len(rep.Warnings) != 0 {
			t.Errorf("%s: chose %s with the linear model's loss %.4g above the network's by %.3g (se %.3g); warnings %q", d.Source, ch.Chosen, k.Loss, k.Diff, k.DiffSE, rep.Warnings)
		}
		if d == cancer && (rep.Measure != "logloss" || rep.Full.Accuracy == nil || rep.Full.AUC == nil || *rep.Full.AUC < 0.95) {
			t.Errorf("%s: measure %s, accuracy %v, AUC %v; want logloss with both, AUC above 0.95", d.Source, rep.Measure, rep.Full.Accuracy, rep.Full.AUC)
		}
		if d != diabetes {
			continue
		}
		for _, r := range rep.Results {
			if (r.Feature == "bmi" || r.Feature == "s5") && !(r.PValue < 0.05) {
				t.Errorf("diabetes: %s's lazy p-value %.3g, want below 0.05", r.Feature, r.PValue)
			}
		}
	}
}
