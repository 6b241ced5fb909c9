package pipeline_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/pipeline"
)

// encodedDataset is a table of 120 rows with a numeric column a (every
// 10th cell missing), a text column c and the response, prepared with
// MissingImpute.
func encodedDataset(t *testing.T) *dataio.Dataset {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 1))
	var b strings.Builder
	b.WriteString("a,c,y\n")
	for i := 0; i < 120; i++ {
		a := fmt.Sprintf("%.3f", 5+rng.NormFloat64())
		if i%10 == 3 {
			a = ""
		}
		fmt.Fprintf(&b, "%s,%s,%.3f\n", a, []string{"p", "q", "r"}[rng.IntN(3)], rng.NormFloat64())
	}
	tab, err := dataio.ReadTable(strings.NewReader(b.String()), "enc.csv")
	if err != nil {
		t.Fatal(err)
	}
	d, err := tab.Prepare(dataio.PrepareOptions{Missing: dataio.MissingImpute})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Cross-fitted, each fold imputes a's missing cells with the mean of its
// own training rows, never with evaluation rows' values.
func TestPrepareFoldsImputeOnEachFoldsTrainingRows(t *testing.T) {
	d := encodedDataset(t)
	cfg := pipeline.Config{Backend: meanBackend{}, BackendName: "mean", Seed: 3}
	folds, err := pipeline.PrepareFolds(context.Background(), d, cfg, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := d.X.Dims()
	means := map[float64]bool{}
	for k, p := range folds {
		defer p.Close()
		sum, count := 0.0, 0
		for i := 0; i < n; i++ {
			if v := d.X.At(i, 0); !slices.Contains(p.EvalRows, i) && !math.IsNaN(v) {
				sum += v
				count++
			}
		}
		if want := sum / float64(count); math.Abs(p.Fill[0]-want) > 1e-12 {
			t.Errorf("fold %d: a imputed with %v, want its training rows' mean %v", k+1, p.Fill[0], want)
		}
		means[p.Fill[0]] = true
		if r, c := p.XTrain.Dims(); r == 0 || c != 5 {
			t.Fatalf("fold %d: %d x %d training matrix", k+1, r, c)
		}
		for _, x := range [][]float64{p.XTrain.RawMatrix().Data, p.XEval.RawMatrix().Data} {
			if slices.ContainsFunc(x, math.IsNaN) {
				t.Fatalf("fold %d: a NaN left in the features", k+1)
			}
		}
	}
	if len(means) != 3 {
		t.Errorf("the folds imputed %d distinct means, want 3", len(means))
	}
}

// The run reports one feature per column of the file: a categorical
// column's indicators and a missingness indicator are in its group.
func TestCheckRunFeaturesOfEncodedData(t *testing.T) {
	d := encodedDataset(t)
	feats, err := dataio.ResolveUnits(d.Names[:len(d.Names)-1], d.Units(), "y", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(feats) != 2 || feats[0].Name != "a" || len(feats[0].Columns) != 2 || feats[1].Name != "c" || len(feats[1].Columns) != 3 {
		t.Fatalf("features %+v", feats)
	}
	if err := pipeline.CheckRun(d, pipeline.Config{Groups: []dataio.Group{{Name: "g", Columns: []string{"a", "c"}}}}, nil, pipeline.EstimateOptions{}); err != nil {
		t.Fatal(err)
	}
}
