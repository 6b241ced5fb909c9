package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// rpcsOf are the plugin calls (vi's names for the step) in which the
// backend's model method (or the start) can die: the server calls the
// model's Jacobian for Gram, and JacobianTVec and PredictShifted for
// PredictShifts.
var rpcsOf = map[string][]string{
	"start":          {"start"},
	"Fit":            {"Fit"},
	"Predict":        {"Predict"},
	"Jacobian":       {"Jacobian", "Gram"},
	"PredictShifted": {"PredictShifted", "PredictShifts"},
	"Kernel":         {"Kernel"},
	"JacobianTVec":   {"JacobianTVec", "PredictShifts"},
	"WarmStart":      {"WarmStart"},
}

// TestBackendFaults kills the backend process (SIGKILL, from inside: the
// test plugin internal/testplugins/faultplugin) at seeded random points of a run
// -- its start, or the N-th call of a model method the run makes; every
// method the run calls at least once -- with
// the lazy estimator on its primal side (Jacobians) and on its dual side
// (kernels). Every time vi exits 1 with one line naming the backend and the
// step, writes no output file, and the same command then resumes (from the
// .partial when there is one) to the JSON of an uninterrupted run, timings
// aside.
func TestBackendFaults(t *testing.T) {
	t.Parallel()
	const (
		extra  = 3                // random faults per configuration after one at every step
		budget = 30 * time.Second // stop injecting after this, whatever the count, so that a slow run still ends
	)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "d.csv"), linearCSV(150))
	rng := rand.New(rand.NewPCG(12, 2026))
	start := time.Now()
	var injected []string
	for _, hidden := range []string{"8", "64"} { // 49 parameters < n_train: primal; 385: dual
		// One split (--repeats 1): with the default's cross-fits a model of
		// one fold can be in a call while another fold's call meets the
		// killed process, and the error then names that call's step.
		args := []string{"estimate", "--data", "d.csv", "--plugin", faultPluginBinary(t), "--hidden", hidden,
			"--epochs", "20", "--folds", "3", "--workers", "1", "--repeats", "1", "--format", "json", "--out", "out.json"}
		run := func(env ...string) (string, int) {
			t.Helper()
			return runWithEnv(t, dir, args, env...)
		}

		// The uninterrupted run, counting the model method calls.
		logPath := filepath.Join(dir, "calls.log")
		if errs, code := run("LAZYVI_TEST_FAULT_LOG=" + logPath); code != 0 {
			t.Fatalf("--hidden %s, uninterrupted: exit %d: %s", hidden, code, errs)
		}
		whole := reportWithoutTimings(t, filepath.Join(dir, "out.json"))
		if err := os.Remove(filepath.Join(dir, "out.json")); err != nil {
			t.Fatal(err)
		}
		calls := callCounts(t, logPath)
		ops := []string{"start"}
		for op := range calls {
			ops = append(ops, op)
		}
		sort.Strings(ops)
		t.Logf("--hidden %s: calls %v", hidden, calls)
		if hidden == "64" && calls["Kernel"] == 0 || hidden == "8" && calls["Jacobian"] == 0 {
			t.Fatalf("--hidden %s: lazy did not take the side the test means to cover: calls %v", hidden, calls)
		}

		// Every step once, in a random order, then random ones.
		rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
		for i := range len(ops) + extra {
			if i > 0 && time.Since(start) > budget { // one fault per configuration at least
				break
			}
			op := ops[i%len(ops)]
			if i >= len(ops) {
				op = ops[rng.IntN(len(ops))]
			}
			n := 1
			if op != "start" {
				n = 1 + rng.IntN(calls[op])
			}
			fault := fmt.Sprintf("%s:%d", op, n)
			injected = append(injected, "--hidden "+hidden+" "+fault)
			errs, code := run("LAZYVI_TEST_FAULT=" + fault)
			if code != 1 {
				t.Fatalf("--hidden %s, fault %s: exit %d, want 1; stderr %q", hidden, fault, code, errs)
			}
			if !strings.HasPrefix(errs, "vi: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `backend "faultplugin": `) ||
				!strings.Contains(errs, "plugin process exited: signal: killed") {
				t.Errorf("--hidden %s, fault %s: stderr %q: want one line naming the backend and its death", hidden, fault, errs)
			}
			if step := stepOf(errs); !slices.Contains(rpcsOf[op], step) {
				t.Errorf("--hidden %s, fault %s: the error names step %q, want one of %v: %q", hidden, fault, step, rpcsOf[op], errs)
			}
			partial := strings.Contains(errs, "out.json.partial")
			if _, err := os.Stat(filepath.Join(dir, "out.json")); err == nil {
				t.Errorf("--hidden %s, fault %s: output file written; stderr %q", hidden, fault, errs)
			}
			checkNoFiles(t, dir, "d.csv", "calls.log", "out.json.partial")

			errs, code = run()
			if code != 0 {
				t.Fatalf("--hidden %s, after fault %s: the resumed run exits %d: %s", hidden, fault, code, errs)
			}
			if partial != strings.Contains(errs, "resuming from") {
				t.Errorf("--hidden %s, after fault %s: checkpoint kept %v, but the next run says %q", hidden, fault, partial, errs)
			}
			if got := reportWithoutTimings(t, filepath.Join(dir, "out.json")); !reflect.DeepEqual(got, whole) {
				t.Errorf("--hidden %s, after fault %s: the resumed run's JSON differs from the uninterrupted run's", hidden, fault)
			}
			if err := os.Remove(filepath.Join(dir, "out.json")); err != nil {
				t.Fatal(err)
			}
		}
		os.Remove(logPath)
	}
	t.Logf("%d faults injected in %v: %s", len(injected), time.Since(start).Round(time.Millisecond), strings.Join(injected, ", "))
}

// stepOf returns the step of a backend error line: what follows
// `backend "NAME": ` up to the next colon.
func stepOf(line string) string {
	_, rest, ok := strings.Cut(line, `backend "faultplugin": `)
	if !ok {
		return ""
	}
	step, _, _ := strings.Cut(rest, ":")
	return step
}

// callCounts reads the fault plugin's call log: calls per model method.
func callCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, op := range strings.Fields(string(b)) {
		counts[op]++
	}
	return counts
}

// reportWithoutTimings reads a JSON report with its "seconds" fields
// removed (wherever they are).
func reportWithoutTimings(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "seconds")
			for _, e := range v {
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(v)
	return v
}

// runWithEnv runs vi with args in dir, env added to the environment: its
// standard error and exit code.
func runWithEnv(t *testing.T, dir string, args []string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(viBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}
