package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// stripSeconds blanks the timings of a JSON report, the one thing that may
// differ between two runs of the same command: every "seconds" value, and
// the per-estimator totals of a "seconds" object (vi roar's).
func stripSeconds(b []byte) string {
	s := regexp.MustCompile(`"seconds": *[-+0-9.eE]+`).ReplaceAllString(string(b), `"seconds": 0`)
	return regexp.MustCompile(`"seconds": *\{[^}]*\}`).ReplaceAllString(s, `"seconds": {}`)
}

// TestTrainModelAndShards: on a 100-feature data set (160 rows: more
// training rows than features), vi estimate --model
// of a one-split model (vi train --repeats 1) gives the report of the run
// that trains (timings aside), and vi merge of three shards, given in any
// order, the report of the single run; both with lazy, dropout, retrain
// and lazy-es and adjusted p-values.
func TestTrainModelAndShards(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		return viOK(t, dir, args...)
	}
	read := func(name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	run("simulate", "--setting", "highdim", "--n", "160", "--seed", "3", "--out", "hd.csv")
	run("train", "--data", "hd.csv", "--target", "y", "--hidden", "20", "--seed", "3", "--repeats", "1", "--out", "hd.vimodel")
	common := []string{"--data", "hd.csv", "--target", "y", "--hidden", "20", "--seed", "3", "--estimators", "lazy,dropout,retrain,lazy-es",
		"--lambda", "10", "--es-steps", "20", "--adjust", "bh", "--format", "json", "--repeats", "1"}
	run(append([]string{"estimate", "--out", "trained.json"}, common...)...)
	run(append([]string{"estimate", "--model", "hd.vimodel", "--out", "model.json"}, common...)...)
	if got, want := stripSeconds(read("model.json")), stripSeconds(read("trained.json")); got != want {
		t.Fatalf("estimate --model differs from the run that trains:\n%s\n---\n%s", got, want)
	}
	for k := 1; k <= 3; k++ {
		run(append([]string{"estimate", "--model", "hd.vimodel", "--shard", []string{"1/3", "2/3", "3/3"}[k-1], "--out", []string{"s1.json", "s2.json", "s3.json"}[k-1]}, common...)...)
	}
	run("merge", "--out", "merged.json", "s2.json", "s3.json", "s1.json")
	if got, want := stripSeconds(read("merged.json")), stripSeconds(read("trained.json")); got != want {
		t.Fatalf("the merge of 3 shards differs from the single run:\n%s\n---\n%s", got, want)
	}
	if strings.Count(string(read("merged.json")), `"feature"`) != 400 {
		t.Fatalf("the merged report does not hold 100 features x 4 estimators")
	}

	// Refusals: exit 2 with a message naming what is wrong.
	os.WriteFile(filepath.Join(dir, "damaged.vimodel"), append(read("hd.vimodel")[:200], 'x'), 0o644)
	tampered := read("hd.vimodel")
	tampered[len(tampered)/2] ^= 1
	os.WriteFile(filepath.Join(dir, "tampered.vimodel"), tampered, 0o644)
	run("simulate", "--setting", "highdim", "--n", "150", "--seed", "4", "--out", "other.csv")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"estimate", "--data", "hd.csv", "--model", "damaged.vimodel"}, "damaged.vimodel: model file is damaged or was modified"},
		{[]string{"estimate", "--data", "hd.csv", "--model", "tampered.vimodel"}, "tampered.vimodel: model file is damaged or was modified"},
		{[]string{"estimate", "--data", "hd.csv", "--model", "hd.csv"}, "hd.csv: not a lazyvi model file"},
		{[]string{"estimate", "--data", "hd.csv", "--model", "nosuch.vimodel"}, "nosuch.vimodel: no such model file"},
		{[]string{"estimate", "--data", "other.csv", "--model", "hd.vimodel"}, "hd.vimodel: the model was trained on other data than other.csv"},
		{[]string{"estimate", "--data", "hd.csv", "--model", "hd.vimodel", "--seed", "4"}, "--seed 4 differs from the model's 3"},
		{[]string{"estimate", "--data", "hd.csv", "--model", "hd.vimodel", "--hidden", "30"}, "--opt hidden=30 differs from the model's options hidden=20"},
		{[]string{"estimate", "--data", "hd.csv", "--model", "hd.vimodel", "--crossfit", "3"}, "--crossfit 3 differs from the model's 0"},
		{[]string{"estimate", "--data", "hd.csv", "--model", "hd.vimodel", "--backend", "linear"}, "--backend linear differs from the model's mlp"},
		{[]string{"estimate", "--data", "hd.csv", "--shard", "4/3"}, "--shard \"4/3\""},
		{[]string{"estimate", "--data", "hd.csv", "--shard", "2/3", "--shard-count", "3"}, "--shard-count goes with --shard auto"},
		{[]string{"train", "--data", "hd.csv"}, "--out MODEL is required"},
		{[]string{"train", "--data", "hd.csv", "--backend", "forest", "--out", "hd.csv"}, "it would be overwritten"},
		{[]string{"train", "--data", "hd.csv", "--eval-data", "other.csv", "--backend", "forest", "--out", "other.csv"}, "it would be overwritten"},
		{[]string{"merge", "s1.json", "s3.json"}, "missing shard 2/3: features"},
		{[]string{"merge", "s1.json", "s2.json", "s2.json", "s3.json"}, "s2.json: overlaps s2.json: both hold shard 2/3"},
		{[]string{"merge", "s1.json", "s2.json", "trained.json"}, "trained.json: is the report of a whole run"},
		{[]string{"merge", "hd.csv"}, "hd.csv: not a JSON report"},
	} {
		_, stderr, code := vi(t, dir, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("vi %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
	// Shards of another run (other settings) are refused too.
	run(append([]string{"estimate", "--model", "hd.vimodel", "--shard", "2/3", "--out", "other2.json", "--level", "0.9"}, common...)...)
	if _, stderr, code := vi(t, dir, "merge", "s1.json", "other2.json", "s3.json"); code != 2 || !strings.Contains(stderr, "other2.json: is a shard of another run than s1.json") {
		t.Errorf("merge of another run's shard: exit %d, stderr %q", code, stderr)
	}
}

// TestShardAutoSlurm: --shard auto reads a Slurm job array's variables.
func TestShardAutoSlurm(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := vi(t, dir, "simulate", "--setting", "linear", "--n", "200", "--out", "lin.csv"); code != 0 {
		t.Fatal(stderr)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "2")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "1")
	t.Setenv("SLURM_ARRAY_TASK_MAX", "3")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
	stdout, stderr, code := vi(t, dir, "estimate", "--data", "lin.csv", "--estimators", "dropout", "--format", "json", "--shard", "auto")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"index": 2`) || !strings.Contains(stdout, `"count": 3`) || strings.Count(stdout, `"estimator": "dropout"`) != 2 {
		t.Errorf("shard auto in task 2 of --array=1-3: want shard 2/3 with features x3, x4; got\n%s", stdout)
	}
}

// TestShapleyModel: vi shapley --model and vi roar --model give the
// results of the runs that train, timings aside; a cross-fitted or
// repeated model and a conflicting flag are refused.
func TestShapleyModel(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		if _, stderr, code := vi(t, dir, args...); code != 0 {
			t.Fatalf("vi %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
	run("simulate", "--setting", "linear", "--n", "300", "--seed", "2", "--out", "lin.csv")
	run("train", "--data", "lin.csv", "--hidden", "10", "--seed", "2", "--repeats", "1", "--out", "lin.vimodel")
	run("train", "--data", "lin.csv", "--hidden", "10", "--seed", "2", "--crossfit", "3", "--repeats", "1", "--out", "cf.vimodel")
	run("train", "--data", "lin.csv", "--hidden", "10", "--seed", "2", "--crossfit", "0", "--repeats", "2", "--out", "reps.vimodel")
	common := []string{"--data", "lin.csv", "--hidden", "10", "--seed", "2", "--reduced", "lazy,dropout", "--lambda", "10", "--format", "json"}
	run(append([]string{"shapley", "--out", "trained.json"}, common...)...)
	run(append([]string{"shapley", "--model", "lin.vimodel", "--out", "model.json"}, common...)...)
	a, err := os.ReadFile(filepath.Join(dir, "trained.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	if stripSeconds(a) != stripSeconds(b) {
		t.Fatalf("shapley --model differs from the run that trains:\n%s\n---\n%s", b, a)
	}
	for model, want := range map[string]string{"cf.vimodel": "holds 3 cross-fitting folds' models", "reps.vimodel": "holds 2 repetitions of one train/evaluation split's model"} {
		if _, stderr, code := vi(t, dir, "shapley", "--data", "lin.csv", "--model", model); code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("shapley with %s: exit %d, stderr %q", model, code, stderr)
		}
	}

	// vi roar --model: the same evaluation as the run that trains.
	roarArgs := []string{"--data", "lin.csv", "--hidden", "10", "--seed", "2", "--estimators", "dropout,retrain", "--fractions", ".2,.5", "--format", "json"}
	run(append([]string{"roar", "--out", "roar-trained.json"}, roarArgs...)...)
	run(append([]string{"roar", "--model", "lin.vimodel", "--out", "roar-model.json"}, roarArgs...)...)
	a, err = os.ReadFile(filepath.Join(dir, "roar-trained.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(dir, "roar-model.json"))
	if err != nil {
		t.Fatal(err)
	}
	if stripSeconds(a) != stripSeconds(b) {
		t.Fatalf("roar --model differs from the run that trains:\n%s\n---\n%s", b, a)
	}
	if _, stderr, code := vi(t, dir, "roar", "--data", "lin.csv", "--model", "lin.vimodel", "--seed", "3"); code != 2 || !strings.Contains(stderr, "--seed 3 differs from the model's 2") {
		t.Errorf("roar --model with another --seed: exit %d, stderr %q", code, stderr)
	}
}

// TestTrainDefaultModel: vi train without counts saves the nine networks
// of vi estimate's default (three repetitions of three folds), and vi
// estimate --model gives exactly the default run's report (every vi, se,
// interval and p-value; timings aside), as do its shards merged; a flag
// that asks for other counts than the file's and --ensemble with a
// one-split file are refused.
func TestTrainDefaultModel(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		return viOK(t, dir, args...)
	}
	read := func(name string) string { return readStripped(t, dir, name) }
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(120))
	fit := []string{"--data", "lin.csv", "--seed", "5", "--epochs", "5", "--hidden", "8", "--workers", "2"}
	_, stderr, code := vi(t, dir, append([]string{"train", "--out", "lin.vimodel"}, fit...)...)
	if code != 0 || !strings.Contains(stderr, "9 models: 3 repetitions of 3 folds") {
		t.Fatalf("vi train: exit %d: %s", code, stderr)
	}
	est := append([]string{"estimate", "--format", "json", "--estimators", "lazy,dropout,retrain", "--adjust", "holm", "--folds", "3"}, fit...)
	run(append(est, "--out", "trained.json")...)
	run(append(est, "--model", "lin.vimodel", "--out", "model.json")...)
	want := read("trained.json")
	if !strings.Contains(want, `"repeats": 3`) || !strings.Contains(want, `"crossfit": 3`) || !strings.Contains(want, `"debias": true`) {
		t.Fatalf("the default run is not the debiased ensemble of 3 x 3:\n%s", want)
	}
	if got := read("model.json"); got != want {
		t.Fatalf("estimate --model differs from the default run that trains:\n%s\n---\n%s", got, want)
	}
	for k, shard := range []string{"1/2", "2/2"} {
		run(append(est, "--model", "lin.vimodel", "--shard", shard, "--out", fmt.Sprintf("s%d.json", k+1))...)
	}
	run("merge", "--out", "merged.json", "s2.json", "s1.json")
	if got := read("merged.json"); got != want {
		t.Fatalf("the merged shards of --model differ from the default run:\n%s\n---\n%s", got, want)
	}

	run(append([]string{"train", "--out", "split.vimodel", "--repeats", "1"}, fit...)...)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "lin.vimodel", "--repeats", "2"}, "--repeats 2 differs from the model's 3"},
		{[]string{"--model", "lin.vimodel", "--crossfit", "0"}, "--crossfit 0 differs from the model's 3"},
		{[]string{"--model", "split.vimodel", "--train-frac", "0.5"}, "--train-frac 0.5 differs from the model's 0.6666666666666666"},
		{[]string{"--model", "split.vimodel", "--ensemble"}, "--ensemble needs a model file of repeated cross-fits (vi train's default); split.vimodel holds one train/evaluation split's model"},
	} {
		_, stderr, code := vi(t, dir, append(append([]string{"estimate"}, fit...), c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", c.args, code, stderr, c.want)
		}
	}
}

// TestTrainChosenKind: where the default chooses the linear model over the
// network (linear data), vi train saves the linear models and the choice,
// and vi estimate --model gives exactly the report of the default run that
// trains (the model choice included; timings aside).
func TestTrainChosenKind(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(300))
	common := []string{"--data", "lin.csv", "--seed", "5", "--workers", "2"}
	_, stderr, code := vi(t, dir, append([]string{"train", "--out", "lin.vimodel", "--epochs", "5"}, common...)...)
	if code != 0 || !strings.Contains(stderr, "linear (chosen over mlp by cross-validated mse)") {
		t.Fatalf("vi train: exit %d: %s", code, stderr)
	}
	est := append([]string{"estimate", "--format", "json"}, common...)
	viOK(t, dir, append(est, "--epochs", "5", "--out", "trained.json")...)
	viOK(t, dir, append(est, "--model", "lin.vimodel", "--out", "model.json")...)
	read := func(name string) string { return readStripped(t, dir, name) }
	want := read("trained.json")
	if !strings.Contains(want, `"backend": "linear"`) || !strings.Contains(want, `"chosen": "linear"`) {
		t.Fatalf("the default run on linear data did not choose the linear model:\n%s", want)
	}
	if got := read("model.json"); got != want {
		t.Fatalf("estimate --model differs from the default run that trains:\n%s\n---\n%s", got, want)
	}
}

// readStripped reads the report dir/name without its timings (stripSeconds).
func readStripped(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return stripSeconds(b)
}
