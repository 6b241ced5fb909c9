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
