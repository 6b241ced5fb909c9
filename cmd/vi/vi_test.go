package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/internal/linalg"
	"github.com/lazyvi/lazyvi/internal/progress"
)

// The tests run vi in this process (vi below), so that each runs its
// commands through run as main does, with its own streams. A built-in
// backend runs in this process too, as in vi, and with --backend-process in
// a subprocess: this test binary, re-executed with serveBackendArg, serves
// it as vi does (TestMain). The tests that must
// signal vi itself, or run an external plugin, build binaries (viBinary,
// pluginBinary).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveBackendArg {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// No progress lines from the vi binaries the tests run with stderr a
	// pipe: the tests that count stderr's lines would see them in a run
	// of over 30 s. The progress tests set it back.
	os.Setenv(progress.EnvVar, "off")
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// vi runs the command line args in this process with dir as the working
// directory (so the calling test must not be parallel) and returns its
// stdout, stderr and exit code.
func vi(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// viOK runs vi in this process (vi) and returns its standard output, failing the
// test on a non-zero exit.
func viOK(t *testing.T, dir string, args ...string) string {
	t.Helper()
	stdout, stderr, code := vi(t, dir, args...)
	if code != 0 {
		t.Fatalf("vi %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return stdout
}

// binDir holds the binaries that viBinary and pluginBinary build, each
// once for all tests.
var (
	binDir   string
	binMu    sync.Mutex
	binBuilt = map[string]string{} // package -> binary
)

// build builds the package pkg into binDir once and returns the binary.
func build(t testing.TB, pkg string) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	if bin, ok := binBuilt[pkg]; ok {
		return bin
	}
	if binDir == "" {
		dir, err := os.MkdirTemp("", "vi-test-")
		if err != nil {
			t.Fatal(err)
		}
		binDir = dir
	}
	bin := filepath.Join(binDir, filepath.Base(pkg))
	if pkg == "." {
		bin = filepath.Join(binDir, "vi")
	}
	// Built as this test binary is: under -tags openblas the binaries run
	// on OpenBLAS too.
	tags := ""
	if linalg.Name == "openblas" {
		tags = "openblas"
	}
	if out, err := exec.Command("go", "build", "-tags", tags, "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	binBuilt[pkg] = bin
	return bin
}

// viBinary returns the path of a vi binary, for the tests that signal it.
func viBinary(t testing.TB) string { return build(t, ".") }

// pluginBinary returns the path of an external backend plugin (the mlp).
func pluginBinary(t testing.TB) string { return build(t, "../../examples/mlpplugin") }

// faultPluginBinary returns the path of the test plugin that crashes on
// demand (internal/testplugins/faultplugin).
func faultPluginBinary(t testing.TB) string {
	return build(t, "../../internal/testplugins/faultplugin")
}

// startVi starts the vi binary in dir with its stderr collected (safe to
// read while vi writes), and kills it at the end of the test whatever
// happens, so that a failed test leaves no run going.
func startVi(t *testing.T, dir string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(viBinary(t), args...)
	cmd.Dir = dir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, stderr
}

// waitExit waits up to within for cmd, started, to exit and reports
// whether it did; a cmd still running then is killed and reaped, so that a
// vi that hangs fails its test instead of holding the test binary until
// its global timeout.
func waitExit(cmd *exec.Cmd, within time.Duration) bool {
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
		return true
	case <-time.After(within):
		_ = cmd.Process.Kill()
		<-waited
		return false
	}
}

// viExec runs the vi binary in dir and returns its stdout, stderr and exit
// code.
func viExec(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(viBinary(t), args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("vi %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return out.String(), errb.String(), code
}

// fastArgs keep a model's training short.
var fastArgs = []string{"--epochs", "5", "--hidden", "8", "--workers", "2", "--folds", "3"}

// linearCSV returns a small regression data set: y = 2 x1 + x2 + noise, x3
// irrelevant.
func linearCSV(n int) string {
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("x1,x2,x3,y\n")
	for range n {
		x1, x2, x3 := rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()
		y := 2*x1 + x2 + 0.3*rng.NormFloat64()
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,%.4f\n", x1, x2, x3, y)
	}
	return b.String()
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkNoFiles fails if dir holds files other than the allowed ones (the
// output file or a leftover temporary file).
func checkNoFiles(t *testing.T, dir string, allowed ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		ok := false
		for _, a := range allowed {
			ok = ok || e.Name() == a
		}
		if !ok {
			t.Errorf("unexpected file %s left in the directory", e.Name())
		}
	}
}

// TestBadInput runs every bad-input case of the issue: exit code 2, one
// line on stderr naming the file and, where it applies, row and column, and
// no output file.
func TestBadInput(t *testing.T) {
	good := linearCSV(40)
	cases := []struct {
		name string
		csv  *string // nil: no file is written
		args []string
		want []string // substrings of the error line
	}{
		{name: "missing file", want: []string{"data.csv", "no such file"}},
		{name: "empty file", csv: ptr(""), want: []string{"data.csv", "empty"}},
		{name: "no header", csv: ptr("1,2,3\n4,5,6\n7,8,9\n"), want: []string{"data.csv", "row 1", "header"}},
		{name: "ragged rows", csv: ptr("a,b,y\n1,2,3\n4,5\n6,7,8\n"), want: []string{"data.csv", "row 3", "fields"}},
		{name: "non-numeric cell", csv: ptr("a,b,y\n1,2,3\n4,five,6\n"), want: []string{"data.csv", "row 3", `column "b"`, "five"}},
		{name: "NaN cell (missing)", csv: ptr("a,b,y\n1,2,3\n4,5,6\nNaN,1,2\n"), want: []string{"data.csv", `1 missing cell in 1 column: "a" 1 (row 4)`, "--missing drop"}},
		{name: "Inf cell", csv: ptr("a,b,y\n1,2,3\n4,5,+Inf\n"), want: []string{"data.csv", "row 3", `column "y"`, "infinite"}},
		{name: "unknown target", csv: &good, args: []string{"--target", "nope"}, want: []string{"data.csv", `column "nope"`, "no such column"}},
		{name: "constant response", csv: ptr(constantCSV(30)), want: []string{"data.csv", `column "y"`, "constant"}},
		{name: "too few rows for folds", csv: ptr(linearCSV(9)), args: []string{"--folds", "5"}, want: []string{"data.csv", "too few"}},
		{name: "unknown estimator", csv: &good, args: []string{"--estimators", "lazy,nope"}, want: []string{`unknown estimator "nope"`, "dropout", "lazy", "retrain"}},
		{name: "unknown measure", csv: &good, args: []string{"--measure", "brier"}, want: []string{`unknown measure "brier"`, "mse"}},
		{name: "unknown backend", csv: &good, args: []string{"--backend", "xgboost"}, want: []string{`unknown backend "xgboost"`, "mlp"}},
		{name: "measure does not fit the task", csv: &good, args: []string{"--measure", "accuracy"}, want: []string{"data.csv", `column "y"`, "accuracy", "regression"}},
		{name: "binary task on a real response", csv: &good, args: []string{"--task", "binary"}, want: []string{"data.csv", `column "y"`, "0/1"}},
		{name: "unknown backend option", csv: &good, args: []string{"--opt", "depth=3"}, want: []string{"depth", "hidden"}},
		{name: "bad backend option value", csv: &good, args: []string{"--opt", "lr=-1"}, want: []string{"lr"}},
		{name: "unknown flag", csv: &good, args: []string{"--bogus"}, want: []string{"bogus"}},
		{name: "unknown format", csv: &good, args: []string{"--format", "xml"}, want: []string{"xml"}},
		{name: "plugin that is not a plugin", csv: &good, args: []string{"--plugin", "/bin/true"}, want: []string{"/bin/true", "not a lazyvi backend plugin"}},
		{name: "missing plugin", csv: &good, args: []string{"--plugin", "./no-such-plugin"}, want: []string{"no-such-plugin"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.csv != nil {
				writeFile(t, filepath.Join(dir, "data.csv"), *tc.csv)
			}
			args := append([]string{"estimate", "--data", "data.csv", "--format", "json", "--out", "out.json"}, fastArgs...)
			args = append(args, tc.args...)
			stdout, stderr, code := vi(t, dir, args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "vi: ") {
				t.Errorf("stderr is not one line \"vi: ...\":\n%s", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("error %q does not mention %q", strings.TrimSpace(stderr), w)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "out.json")); err == nil {
				t.Errorf("out.json was written")
			}
			checkNoFiles(t, dir, "data.csv")
		})
	}
}

func ptr(s string) *string { return &s }

func constantCSV(n int) string {
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,%d,5\n", i, i*i%7)
	}
	return b.String()
}

// report mirrors the --format json contract.
type jsonReport struct {
	Measure string `json:"measure"`
	Backend string `json:"backend"`
	N       *int   `json:"n"`
	NTrain  *int   `json:"n_train"`
	NEval   *int   `json:"n_eval"`
	Seed    *int64 `json:"seed"`
	// CrossFit: every row evaluated once (n_eval is n).
	CrossFit int `json:"crossfit"`
	Full     *struct {
		Score    *float64 `json:"score"`
		Seconds  *float64 `json:"seconds"`
		Accuracy *float64 `json:"accuracy"`
		AUC      *float64 `json:"auc"`
	} `json:"full"`
	Results []map[string]any `json:"results"`
}

func parseReport(t *testing.T, b []byte) jsonReport {
	t.Helper()
	var r jsonReport
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b)
	}
	if r.Measure == "" || r.Backend == "" || r.N == nil || r.NTrain == nil || r.NEval == nil || r.Seed == nil ||
		r.Full == nil || r.Full.Score == nil || r.Full.Seconds == nil {
		t.Fatalf("report lacks fields of the contract:\n%s", b)
	}
	switch {
	case r.CrossFit > 0 && (*r.NEval != *r.N || *r.NTrain >= *r.N):
		t.Errorf("cross-fitted: n_train %d, n_eval %d, want n_eval = n %d and n_train below", *r.NTrain, *r.NEval, *r.N)
	case r.CrossFit == 0 && *r.NTrain+*r.NEval != *r.N:
		t.Errorf("n_train %d + n_eval %d != n %d", *r.NTrain, *r.NEval, *r.N)
	}
	for _, res := range r.Results {
		// One procedure's estimate, interval and test: the interval holds
		// vi and lies above delta (0 here) exactly when p < (1 - level)/2.
		vi, _ := res["vi"].(float64)
		lo, _ := res["ci_low"].(float64)
		hi, _ := res["ci_high"].(float64)
		p, _ := res["p_value"].(float64)
		if !(lo <= vi && vi <= hi) || (lo > 0) != (p < (1-inference.DefaultLevel)/2) {
			t.Errorf("result %v: interval and test disagree", res)
		}
		for _, k := range []string{"feature", "estimator", "vi", "se", "ci_low", "ci_high", "seconds"} {
			if _, ok := res[k]; !ok {
				t.Errorf("result %v lacks %q", res, k)
			}
		}
		_, hasLambda := res["lambda"]
		if res["estimator"] == "lazy" && !hasLambda && res["no_update"] != true {
			t.Errorf("lazy result %v has neither lambda nor no_update", res)
		}
		if res["estimator"] != "lazy" && hasLambda {
			t.Errorf("%v result has a lambda", res["estimator"])
		}
	}
	return r
}

// TestEstimateJSON is a good run: the JSON output parses, has the contract's
// fields, one result per estimator and feature, in estimator order, and
// --out replaces an existing file atomically.
func TestEstimateJSON(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(90))
	writeFile(t, filepath.Join(dir, "out.json"), "old")
	args := append([]string{"estimate", "--data", "data.csv", "--target", "y", "--format", "json", "--out", "out.json", "--seed", "3"}, fastArgs...)
	stdout, stderr, code := vi(t, dir, args...)
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout with --out: %q", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := parseReport(t, b)
	if r.Measure != "mse" || r.Backend != "mlp" || *r.N != 90 || *r.Seed != 3 {
		t.Errorf("measure %q backend %q n %d seed %d, want mse mlp 90 3", r.Measure, r.Backend, *r.N, *r.Seed)
	}
	var got []string
	for _, res := range r.Results {
		got = append(got, fmt.Sprintf("%v/%v", res["estimator"], res["feature"]))
	}
	// The default estimators: lazy and dropout (retrain when asked).
	want := "lazy/x1 lazy/x2 lazy/x3 dropout/x1 dropout/x2 dropout/x3"
	if strings.Join(got, " ") != want {
		t.Errorf("results\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	for _, res := range r.Results {
		lo, vi, hi := res["ci_low"].(float64), res["vi"].(float64), res["ci_high"].(float64)
		if !(lo <= vi && vi <= hi) || math.IsNaN(vi) {
			t.Errorf("%v: interval [%g, %g] does not hold vi %g", res["feature"], lo, hi, vi)
		}
	}
	checkNoFiles(t, dir, "data.csv", "out.json")
}

// TestEstimateFormats checks the table and csv outputs on stdout, a measure
// and estimators chosen by flag, and a 0/1 response (binary task).
func TestEstimateFormats(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(60))
	args := append([]string{"estimate", "--data", "data.csv", "--estimators", "dropout", "--measure", "r2"}, fastArgs...)
	stdout, stderr, code := vi(t, dir, args...)
	if code != 0 {
		t.Fatalf("table: exit code %d; stderr:\n%s", code, stderr)
	}
	// Nothing but the full model's warnings (5 epochs end at the cap): no
	// progress drawing when not a terminal.
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if !strings.HasPrefix(line, "vi: warning: ") {
			t.Errorf("stderr holds more than warnings when not a terminal: %q", stderr)
			break
		}
	}
	if !strings.Contains(stderr, "epoch cap (5 epochs)") {
		t.Errorf("no warning that training ended at the cap: %q", stderr)
	}
	// The default: three cross-fits of three folds, predictions averaged,
	// the debiased paired estimate.
	// One estimator without a lambda: its own table, no lambda column.
	for _, w := range []string{"measure r2", "backend mlp", "n 60", "n_train 40", "n_eval 60", "inference plain", "crossfit 3  repeats 3 (predictions averaged)  debiased",
		"dropout: each feature's VI, the most important first", "feature", "ci_high", "x3"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("table lacks %q:\n%s", w, stdout)
		}
	}

	if strings.Contains(stdout, "lambda") {
		t.Errorf("a lambda column without lazy:\n%s", stdout)
	}

	stdout, stderr, code = vi(t, dir, append(args, "--format", "csv")...)
	if code != 0 {
		t.Fatalf("csv: exit code %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 || lines[0] != "feature,estimator,vi,se,ci_low,ci_high,bias_bound,p_value,lambda,seconds" {
		t.Errorf("csv output:\n%s", stdout)
	}
}

// TestEstimateBinaryPlugin runs a 0/1 response (logloss by default, with
// the full model's accuracy and AUC beside it) on the external plugin named
// with --plugin.
func TestEstimateBinaryPlugin(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 3))
	var b strings.Builder
	b.WriteString("a,b,label\n")
	for range 80 {
		x1, x2 := rng.NormFloat64(), rng.NormFloat64()
		y := 0
		if 2*x1+0.5*rng.NormFloat64() > 0 {
			y = 1
		}
		fmt.Fprintf(&b, "%.3f,%.3f,%d\n", x1, x2, y)
	}
	writeFile(t, filepath.Join(dir, "bin.csv"), b.String())
	args := append([]string{"estimate", "--data", "bin.csv", "--plugin", pluginBinary(t), "--format", "json"}, fastArgs...)
	stdout, stderr, code := vi(t, dir, args...)
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	r := parseReport(t, []byte(stdout))
	// The default estimators, lazy and dropout, on the 2 features.
	if r.Measure != "logloss" || r.Backend != "mlpplugin" || len(r.Results) != 4 {
		t.Errorf("measure %q backend %q %d results, want logloss mlpplugin 4", r.Measure, r.Backend, len(r.Results))
	}
	// Five epochs train little: the numbers need only be there.
	if a, u := r.Full.Accuracy, r.Full.AUC; a == nil || u == nil || !(*a >= 0 && *a <= 1 && *u >= 0 && *u <= 1) {
		t.Errorf("full model's accuracy %v, AUC %v: want both in [0, 1]", a, u)
	}
}

// TestOutUnchangedOnError: a failing run leaves an existing --out file as it
// was, also when it fails after the backend started.
func TestOutUnchangedOnError(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(40))
	writeFile(t, filepath.Join(dir, "out.csv"), "old")
	for _, extra := range [][]string{
		{"--target", "nope"},     // fails in Prepare, after the backend started
		{"--opt", "epochs=zero"}, // fails in the backend
		{"--estimators", "lazy", "--data", "missing.csv"},
	} {
		args := append([]string{"estimate", "--data", "data.csv", "--format", "csv", "--out", "out.csv"}, fastArgs...)
		_, stderr, code := vi(t, dir, append(args, extra...)...)
		if code != 2 {
			t.Errorf("%v: exit code %d, want 2; stderr:\n%s", extra, code, stderr)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "out.csv")); err != nil || string(b) != "old" {
			t.Errorf("%v: out.csv changed: %q, %v", extra, b, err)
		}
	}
	checkNoFiles(t, dir, "data.csv", "out.csv")

	// An --out in a directory that does not exist is a usage error before
	// anything runs.
	_, stderr, code := vi(t, dir, "estimate", "--data", "data.csv", "--out", "nodir/out.csv")
	if code != 2 || !strings.Contains(stderr, "nodir") {
		t.Errorf("--out nodir/out.csv: exit code %d, stderr %q", code, stderr)
	}
}

func TestSimulate(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := vi(t, dir, "simulate", "--setting", "linear", "--n", "50", "--rho", "0.9", "--seed", "2", "--out", "lin.csv")
	if code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	data, err := os.ReadFile(filepath.Join(dir, "lin.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 51 || lines[0] != "x1,x2,x3,x4,x5,x6,y" {
		t.Errorf("lin.csv: %d lines, header %q; want 51 lines, header x1,...,x6,y", len(lines), lines[0])
	}
	tb, err := os.ReadFile(filepath.Join(dir, "lin.truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Setting string             `json:"setting"`
		Rho     float64            `json:"rho"`
		Truth   map[string]float64 `json:"truth"`
	}
	if err := json.Unmarshal(tb, &truth); err != nil {
		t.Fatalf("lin.truth.json: %v\n%s", err, tb)
	}
	if want := 1.5 * 1.5 * (1 - 0.81); truth.Setting != "linear" || truth.Rho != 0.9 || math.Abs(truth.Truth["x1"]-want) > 1e-12 {
		t.Errorf("truth %+v, want setting linear, rho 0.9, x1 %g", truth, want)
	}
	checkNoFiles(t, dir, "lin.csv", "lin.truth.json")

	// The simulated file is valid input for estimate.
	args := append([]string{"estimate", "--data", "lin.csv", "--estimators", "dropout", "--format", "csv"}, fastArgs...)
	if _, stderr, code := vi(t, dir, args...); code != 0 {
		t.Errorf("estimate on lin.csv: exit code %d; stderr:\n%s", code, stderr)
	}

	// Bad settings are usage errors and write nothing.
	for _, args := range [][]string{
		{"--setting", "cubic", "--out", "x.csv"},
		{"--setting", "binary", "--rho", "0.5", "--out", "x.csv"},
		{"--n", "0", "--out", "x.csv"},
		{"--setting", "linear"}, // no --out
	} {
		_, stderr, code := vi(t, dir, append([]string{"simulate"}, args...)...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("simulate %v: exit code %d, stderr %q; want 2 and one line", args, code, stderr)
		}
	}
	checkNoFiles(t, dir, "lin.csv", "lin.truth.json")
}

func TestListsAndHelp(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"backends"}, 0, []string{"mlp", "hidden", "epochs", "gradients"}},
		{[]string{"estimators"}, 0, []string{"dropout", "lazy", "retrain"}},
		{[]string{"measures"}, 0, []string{"accuracy", "logloss", "mse", "r2"}},
		{[]string{"version"}, 0, []string{"vi "}},
		{[]string{"help"}, 0, []string{"estimate", "simulate", "backends"}},
		{[]string{"help", "estimate"}, 0, []string{"--data", "--estimators", "Exit codes"}},
		{[]string{"estimate", "-h"}, 0, []string{"usage: vi estimate"}},
		{[]string{"help", "nope"}, 2, nil},
		{[]string{"nope"}, 2, nil},
		{nil, 2, nil},
		{[]string{"estimators", "extra"}, 2, nil},
	} {
		stdout, stderr, code := vi(t, dir, tc.args...)
		if code != tc.code {
			t.Errorf("vi %v: exit code %d, want %d; stderr %q", tc.args, code, tc.code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("vi %v: output lacks %q:\n%s", tc.args, w, stdout)
			}
		}
	}
}
