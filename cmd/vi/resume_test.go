package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/pipeline"
)

// An interrupted `vi estimate --out` (or `vi shapley --out`) keeps its
// finished reduced models in OUT.partial; the same command resumes from
// them, gives the same numbers as an uninterrupted run, and removes the file.
func TestEstimateResumes(t *testing.T) {
	t.Parallel()
	testResumes(t, "highdim", 300, []string{"estimate", "--estimators", "retrain"})
}

func TestShapleyResumes(t *testing.T) {
	t.Parallel()
	testResumes(t, "linear", 300, []string{"shapley", "--reduced", "retrain", "--exact"})
}

// A sampled design resumes too: its batches are drawn from the seed alone.
func TestShapleySampledResumes(t *testing.T) {
	t.Parallel()
	testResumes(t, "highdim", 300, []string{"shapley", "--reduced", "retrain", "--subsets", "300"})
}

// Lazy at scale (the matrix-free path, forced by --lazy-mem 1 at 600
// rows): the features' solves are preconditioned by their fold's
// baseline's Ritz pairs (Reduced.Carry), and the baselines come first, so
// the interrupted run's checkpoint holds baselines whose features the
// resumed run solves from the Carry read back from the file.
func TestEstimateLazyScaledResumes(t *testing.T) {
	t.Parallel()
	testResumes(t, "linear", 600, []string{"estimate", "--estimators", "lazy", "--lazy-mem", "1"})
}

func testResumes(t *testing.T, setting string, n int, command []string) {
	dir := t.TempDir()
	if _, stderr, code := viExec(t, dir, "simulate", "--setting", setting, "--n", strconv.Itoa(n), "--out", "d.csv"); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	args := append(command, "--data", "d.csv", "--epochs", "20", "--workers", "1", "--format", "json")
	if _, stderr, code := viExec(t, dir, append(args, "--out", "whole.json")...); code != 0 {
		t.Fatalf("uninterrupted run: %s", stderr)
	}

	// Interrupt a run once a few reduced models are in its checkpoint.
	cmd, stderr := startVi(t, dir, append(args, "--out", "resumed.json")...)
	partial := filepath.Join(dir, "resumed.json.partial")
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(partial)
		if bytes.Count(b, []byte("\n")) >= 4 { // the header and three models
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint entries after 60 s; stderr: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the interrupted run succeeded; it finished before the interrupt")
	}
	if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "resumed.json.partial") {
		t.Fatalf("interrupted run: stderr %q, want one line naming the checkpoint", msg)
	}

	_, errs, code := viExec(t, dir, append(args, "--out", "resumed.json")...)
	if code != 0 || !strings.Contains(errs, "resuming from") {
		t.Fatalf("resumed run: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("checkpoint %s left after a successful run", partial)
	}
	read := func(name string) pipeline.Report {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var r pipeline.Report // shapley's report has the same results fields
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	whole, resumed := read("whole.json"), read("resumed.json")
	if command[0] == "estimate" && (!whole.Debias || whole.Repeats != 3 || !resumed.Debias || resumed.Repeats != 3) {
		t.Errorf("estimate: debias %v, %d repetitions (resumed: %v, %d); want the default's debiased estimate over 3",
			whole.Debias, whole.Repeats, resumed.Debias, resumed.Repeats)
	}
	if len(whole.Results) != len(resumed.Results) {
		t.Fatalf("%d results resumed, want %d", len(resumed.Results), len(whole.Results))
	}
	for i, w := range whole.Results {
		r := resumed.Results[i]
		if r.Feature != w.Feature || r.VI != w.VI || r.SE != w.SE || r.PValue != w.PValue || r.CILow != w.CILow || r.CIHigh != w.CIHigh {
			t.Errorf("result %d: resumed %s vi %v se %v p %v [%v, %v], uninterrupted %s vi %v se %v p %v [%v, %v]",
				i, r.Feature, r.VI, r.SE, r.PValue, r.CILow, r.CIHigh, w.Feature, w.VI, w.SE, w.PValue, w.CILow, w.CIHigh)
		}
	}
}

// A checkpoint left by an older vi (format version 2, whose baselines
// carry nothing) is not resumed from: the run says so in one line and
// starts afresh.
func TestEstimateOldCheckpoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, stderr, code := viExec(t, dir, "simulate", "--setting", "linear", "--n", "200", "--out", "d.csv"); code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	old := `{"lazyvi_checkpoint":2,"fingerprint":"x"}
{"key":"fold 1/1, estimator dropout, feature x1","seconds":1,"rows":1,"cols":1,"pred":[0]}
`
	if err := os.WriteFile(filepath.Join(dir, "r.json.partial"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := viExec(t, dir, "estimate", "--data", "d.csv", "--estimators", "dropout", "--repeats", "1", "--epochs", "5",
		"--workers", "1", "--format", "json", "--out", "r.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "r.json.partial is a checkpoint of another vi's format (version 2)") || !strings.Contains(stderr, "starts afresh") ||
		strings.Contains(stderr, "resuming from") {
		t.Errorf("stderr %q: want the old checkpoint named, its version and a fresh start", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json.partial")); !os.IsNotExist(err) {
		t.Errorf("checkpoint left after a successful run")
	}
}
