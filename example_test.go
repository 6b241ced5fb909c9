package lazyvi_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/pipeline"
)

// servePluginEnv, set in the environment of this test binary re-executed,
// makes it a backend plugin: the program of Example_plugin.
const servePluginEnv = "LAZYVI_EXAMPLE_SERVE_PLUGIN"

func TestMain(m *testing.M) {
	if os.Getenv(servePluginEnv) != "" {
		// A backend plugin's whole main.
		backendplugin.Serve(linear.Backend{})
		return
	}
	os.Exit(m.Run())
}

// A whole run on the built-in data, as "vi estimate" does it: the mlp
// backend in this process, lazy and dropout, three cross-fits of
// three folds with the predictions averaged, the debiased paired
// estimate, the task's default measure. The numbers depend on floating-point details of
// the build (pure Go or OpenBLAS), so the example prints each estimator's
// two most important features.
func ExampleRun() {
	d, err := lazyvi.Diabetes()
	if err != nil {
		log.Fatal(err)
	}
	rep, err := lazyvi.Run(context.Background(), d, lazyvi.Options{Config: pipeline.Config{Seed: 1}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s, %s inference, debiased %v, %d repetitions of %d folds, %d evaluation rows\n",
		rep.Measure, rep.Inference, rep.Debias, rep.Repeats, rep.CrossFit, rep.NEval)
	for _, name := range lazyvi.DefaultEstimators() {
		fmt.Printf("%-8s %s\n", name, strings.Join(top(rep.Results, name, 2), ", "))
	}
	// Output:
	// mse, plain inference, debiased true, 3 repetitions of 3 folds, 442 evaluation rows
	// lazy     bmi, bp
	// dropout  s5, bmi
}

// A backend served as a plugin: a program whose main is
//
//	func main() { backendplugin.Serve(linear.Backend{}) }
//
// (here this test binary, see TestMain) runs in its own process, and
// backendplugin.Open starts it and returns the backend it serves, which
// Run uses like any other: "vi estimate --plugin PROGRAM" does the same.
func Example_plugin() {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), servePluginEnv+"=1")
	client, err := backendplugin.Open(context.Background(), "linear", cmd)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	be := client.Backend()
	fmt.Println("gradients:", be.Capabilities().Gradients)

	d, err := lazyvi.Diabetes()
	if err != nil {
		log.Fatal(err)
	}
	cfg := pipeline.Config{Backend: be, BackendName: "linear", Seed: 1}
	rep, err := lazyvi.Run(context.Background(), d, lazyvi.Options{Config: cfg})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("backend:", rep.Backend)
	// The most important feature by each estimator: dropout, biased up
	// for correlated features, puts s1 (Corr(s1, s2) 0.9, which the linear
	// fit weighs against each other) first.
	for _, name := range lazyvi.DefaultEstimators() {
		fmt.Printf("%-8s %s\n", name, top(rep.Results, name, 1)[0])
	}
	// Output:
	// gradients: true
	// backend: linear
	// lazy     bmi
	// dropout  s1
}

// top returns the names of the n features of largest VI by the estimator.
func top(results []inference.Result, estimator string, n int) []string {
	var res []inference.Result
	for _, r := range results {
		if r.Estimator == estimator {
			res = append(res, r)
		}
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].VI > res[j].VI })
	var names []string
	for _, r := range res[:min(n, len(res))] {
		names = append(names, r.Feature)
	}
	return names
}

// Run's defaults are vi estimate's: DefaultCrossFit folds cross-fitted
// DefaultRepeats times with the predictions averaged, the debiased paired
// estimate (EnsembleDefault) at level 0.95, the task's measure, the mlp's
// architecture chosen among AutoHidden (on the diabetes data's 59
// validation rows, too few to choose by, the first) and compared with the
// linear model, which wins, the intercept-only baseline. A train share or one repetition asks for one split or
// one cross-fit instead, with split inference (vi estimate --train-frac,
// --repeats 1). Every result's interval holds its estimate and lies above
// 0 exactly when its p-value is below 0.025.
func TestRunDefaults(t *testing.T) {
	d, err := lazyvi.Diabetes()
	if err != nil {
		t.Fatal(err)
	}
	dropout, err := framework.LookupEstimator("dropout")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := lazyvi.Run(context.Background(), d, lazyvi.Options{Config: pipeline.Config{Seed: 1}, Estimators: []framework.Estimator{dropout}})
	if err != nil {
		t.Fatal(err)
	}
	// The network (3078) does not beat the linear model (3102) by more than
	// the standard error of the difference (81): the linear model is the
	// full model, and the only baseline left is the intercept.
	if rep.Inference != "plain" || rep.Level != 0.95 || rep.Measure != "mse" || rep.Backend != "linear" {
		t.Errorf("inference %q level %g measure %q backend %q; want plain, 0.95, mse, linear", rep.Inference, rep.Level, rep.Measure, rep.Backend)
	}
	ch := rep.Full.Choice
	if ch == nil || ch.Chosen != "linear" || len(ch.Kinds) != 2 || ch.Kinds[0].Name != lazyvi.DefaultBackend || ch.Kinds[0].Model != lazyvi.AutoHidden()[0] {
		t.Errorf("model choice %+v; want linear over %s (%s, the first of lazyvi.AutoHidden(), for too few validation rows)", ch, lazyvi.DefaultBackend, lazyvi.AutoHidden()[0])
	}
	var bases []string
	for _, b := range rep.Full.Baselines {
		bases = append(bases, b.Name)
	}
	if strings.Join(bases, " ") != "intercept" {
		t.Errorf("baselines %q, want the intercept only", bases)
	}
	if rep.CrossFit != lazyvi.DefaultCrossFit || rep.Repeats != lazyvi.DefaultRepeats || !rep.Ensemble || !rep.Debias || rep.NEval != rep.N {
		t.Errorf("crossfit %d repeats %d ensemble %v debias %v n_eval %d of %d; want %d, %d, averaged, debiased, every row",
			rep.CrossFit, rep.Repeats, rep.Ensemble, rep.Debias, rep.NEval, rep.N, lazyvi.DefaultCrossFit, lazyvi.DefaultRepeats)
	}
	above := 0
	for _, r := range rep.Results {
		if !(r.CILow <= r.VI && r.VI <= r.CIHigh) || (r.CILow > 0) != (r.PValue < 0.025) {
			t.Errorf("%s: vi %g, interval [%g, %g], p %g: interval and test disagree", r.Feature, r.VI, r.CILow, r.CIHigh, r.PValue)
		}
		if r.CILow > 0 {
			above++
		}
	}
	if above == 0 {
		t.Errorf("no interval above 0 on the diabetes data (bmi and s5 matter)")
	}
	for _, c := range []struct {
		name     string
		cfg      pipeline.Config
		crossfit int
	}{
		{"TrainFrac", pipeline.Config{Seed: 1, TrainFrac: 0.5}, 0},
		{"Repeats 1", pipeline.Config{Seed: 1, Repeats: 1}, 0},
		{"CrossFit 3, Repeats 1", pipeline.Config{Seed: 1, CrossFit: 3, Repeats: 1}, 3},
	} {
		rep, err := lazyvi.Run(context.Background(), d, lazyvi.Options{Config: c.cfg, Estimators: []framework.Estimator{dropout}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rep.CrossFit != c.crossfit || rep.Repeats != 0 || rep.Ensemble || rep.Debias || rep.Inference != "split" {
			t.Errorf("%s: crossfit %d repeats %d ensemble %v debias %v inference %s; want %d folds once, split", c.name, rep.CrossFit, rep.Repeats, rep.Ensemble, rep.Debias, rep.Inference, c.crossfit)
		}
	}
	// A fold or repetition count alone keeps the ensemble and takes the
	// other count's default, as vi's --crossfit K or --repeats M alone.
	for _, c := range []struct {
		name              string
		cfg               pipeline.Config
		crossfit, repeats int
	}{
		{"CrossFit 2", pipeline.Config{Seed: 1, CrossFit: 2}, 2, lazyvi.DefaultRepeats},
		{"Repeats 2", pipeline.Config{Seed: 1, Repeats: 2}, lazyvi.DefaultCrossFit, 2},
	} {
		rep, err := lazyvi.Run(context.Background(), d, lazyvi.Options{Config: c.cfg, Estimators: []framework.Estimator{dropout}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rep.CrossFit != c.crossfit || rep.Repeats != c.repeats || !rep.Ensemble || !rep.Debias {
			t.Errorf("%s: crossfit %d repeats %d ensemble %v debias %v; want %d x %d, averaged, debiased", c.name, rep.CrossFit, rep.Repeats, rep.Ensemble, rep.Debias, c.crossfit, c.repeats)
		}
	}
}
