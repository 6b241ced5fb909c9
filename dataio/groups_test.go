package dataio_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	_ "github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

func TestParseGroups(t *testing.T) {
	g, err := dataio.ParseGroups(" climate = sst1, sst2 ;demog=age,sex;")
	if err != nil {
		t.Fatal(err)
	}
	want := []dataio.Group{{"climate", []string{"sst1", "sst2"}}, {"demog", []string{"age", "sex"}}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("want %v, got %v", want, g)
	}
	for _, bad := range []string{"", "a", "=x", "a=", "a=x,x"} {
		if _, err := dataio.ParseGroups(bad); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%q: want a usage error, got %v", bad, err)
		}
	}
	f, err := dataio.ReadGroups(strings.NewReader("# groups\nclimate: sst1, sst2\n\ndemog: age,sex\n"), "g.txt")
	if err != nil || !reflect.DeepEqual(f, want) {
		t.Errorf("file: want %v, got %v, %v", want, f, err)
	}
	if _, err := dataio.ReadGroups(strings.NewReader("a: x\nb x\n"), "g.txt"); err == nil || !strings.Contains(err.Error(), "g.txt: row 2") {
		t.Errorf("bad line: want g.txt: row 2, got %v", err)
	}
}

func TestResolveFeatures(t *testing.T) {
	names := []string{"age", "color_red", "color_blue", "blood_type_A", "blood_type_B", "blood_pressure", "x"}
	cases := []struct {
		groups []dataio.Group
		onehot bool
		want   []framework.Feature
	}{
		{nil, false, []framework.Feature{{Name: "age", Columns: []int{0}}, {Name: "color_red", Columns: []int{1}}, {Name: "color_blue", Columns: []int{2}}, {Name: "blood_type_A", Columns: []int{3}}, {Name: "blood_type_B", Columns: []int{4}}, {Name: "blood_pressure", Columns: []int{5}}, {Name: "x", Columns: []int{6}}}},
		{nil, true, []framework.Feature{{Name: "color", Columns: []int{1, 2}}, {Name: "blood_type", Columns: []int{3, 4}}, {Name: "age", Columns: []int{0}}, {Name: "blood_pressure", Columns: []int{5}}, {Name: "x", Columns: []int{6}}}},
		{[]dataio.Group{{"ax", []string{"x", "age"}}}, true, []framework.Feature{{Name: "ax", Columns: []int{6, 0}}, {Name: "color", Columns: []int{1, 2}}, {Name: "blood_type", Columns: []int{3, 4}}, {Name: "blood_pressure", Columns: []int{5}}}},
	}
	for i, c := range cases {
		got, err := dataio.ResolveFeatures(names, "y", c.groups, c.onehot)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Case %d: want %v, got %v (%v)", i, c.want, got, err)
		}
	}
	for _, g := range [][]dataio.Group{{{"g", []string{"nope"}}}, {{"g", []string{"y"}}}, {{"x", []string{"age"}}}, {{"g", []string{"age"}}, {"g", []string{"x"}}}} {
		if _, err := dataio.ResolveFeatures(names, "y", g, false); !errors.Is(err, framework.ErrUsage) {
			t.Errorf("%v: want a usage error, got %v", g, err)
		}
	}
}

// TestGroupClosedForm: on the linear setting (rho 0.5, n 3000) the VI of
// the group {x1, x2} is beta_12^T (Sigma_12 - Sigma_12,rest Sigma_rest^-1
// Sigma_rest,12) beta_12 (here Sigma_12,rest = 0, so 1.5^2 + 1.2^2 + 2 rho
// 1.5 1.2 = 5.49), and lazy's and retrain's estimates must lie within 3 of
// their (split-inference) standard errors of it.
func TestGroupClosedForm(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks")
	}
	const rho, n = 0.5, 3000
	sim, err := simulate.Linear(n, rho, 11)
	if err != nil {
		t.Fatal(err)
	}
	// The closed form, computed in general.
	p := 6
	sigma := mat.NewSymDense(p, nil)
	for j := range p {
		sigma.SetSym(j, j, 1)
	}
	sigma.SetSym(0, 1, rho)
	beta := []float64{1.5, 1.2, 1, 0, 0, 0}
	g, rest := []int{0, 1}, []int{2, 3, 4, 5}
	sub := func(r, c []int) *mat.Dense {
		out := mat.NewDense(len(r), len(c), nil)
		for i, a := range r {
			for j, b := range c {
				out.Set(i, j, sigma.At(a, b))
			}
		}
		return out
	}
	var inv, cond, tmp mat.Dense
	if err := inv.Inverse(sub(rest, rest)); err != nil {
		t.Fatal(err)
	}
	tmp.Mul(sub(g, rest), &inv)
	cond.Mul(&tmp, sub(rest, g))
	cond.Sub(sub(g, g), &cond)
	b12 := mat.NewVecDense(2, beta[:2])
	truth := mat.Inner(b12, &cond, b12)
	if math.Abs(truth-5.49) > 1e-12 {
		t.Fatalf("closed form %v, want 5.49", truth)
	}

	d := &dataio.Dataset{Source: "linear", Names: sim.Names, X: sim.X}
	be, err := framework.LookupBackend("mlp")
	if err != nil {
		t.Fatal(err)
	}
	cfg := pipeline.Config{Backend: be, BackendName: "mlp", Seed: 3, Groups: []dataio.Group{{"x12", []string{"x1", "x2"}}}}
	prob, err := pipeline.Prepare(context.Background(), d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer prob.Close()
	feats, err := dataio.ResolveFeatures(prob.FeatureNames, "y", cfg.Groups, false)
	if err != nil {
		t.Fatal(err)
	}
	feats = feats[:1]
	res, err := pipeline.Estimate(context.Background(), prob, measures.MSE(), []framework.Estimator{lazy.Estimator{}, estimators.Retrain{}}, feats, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Split}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("%s %s: vi %.4f se %.4f (truth %.4f, %.2f se away)", r.Estimator, r.Feature, r.VI, r.SE, truth, (r.VI-truth)/r.SE)
		if math.Abs(r.VI-truth) > 3*r.SE {
			t.Errorf("%s: VI of {x1, x2} %.4f, want %.4f within 3 se (%.4f)", r.Estimator, r.VI, truth, 3*r.SE)
		}
	}
}

// TestReadGroupsLineEnds: a groups file saved by a spreadsheet or an old
// Mac editor reads as the same groups, and a long bad line is cut short in
// the error.
func TestReadGroupsLineEnds(t *testing.T) {
	want := []dataio.Group{{"climate", []string{"sst1", "sst2"}}, {"demog", []string{"age", "sex"}}}
	for _, in := range []string{
		"climate: sst1, sst2\ndemog: age,sex\n",
		"\ufeffclimate: sst1, sst2\r\ndemog: age,sex\r\n",
		"climate: sst1, sst2\rdemog: age,sex\r",
		"# groups\rclimate: sst1, sst2\r\rdemog: age,sex",
	} {
		got, err := dataio.ReadGroups(strings.NewReader(in), "g.txt")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: want %v, got %v, %v", in, want, got, err)
		}
	}
	_, err := dataio.ReadGroups(strings.NewReader("a: x\r"+strings.Repeat("b", 1<<20)+"\r"), "g.txt")
	if err == nil || !strings.HasPrefix(err.Error(), "g.txt: row 2: ") || !strings.Contains(err.Error(), "(1048576 bytes)") || len(err.Error()) > 200 {
		t.Errorf("want a short error for row 2 with the line's length, got %.300v", err)
	}
	_, err = dataio.ParseGroups("g=" + strings.Repeat("c,", 1<<19) + "c")
	if err == nil || !strings.Contains(err.Error(), `names column "c" twice`) {
		t.Errorf("want the repeated column named, got %.300v", err)
	}
	_, err = dataio.ParseGroups(strings.Repeat("z", 1<<20))
	if err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "(1048576 bytes)") {
		t.Errorf("want a short error with the spec's length, got %.300v", err)
	}
}
