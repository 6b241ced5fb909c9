package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// vi experiment --list names the paper's nine experiments; an unknown
// name or a bad flag is a usage error (exit 2).
func TestExperimentList(t *testing.T) {
	dir := t.TempDir()
	out := viOK(t, dir, "experiment", "--list")
	for _, name := range []string{"highdim", "corr", "time-error", "binary", "width", "init", "ntk-trace", "shapley", "roar-images"} {
		if !strings.Contains(out, "  "+name+" ") {
			t.Errorf("--list does not name %s:\n%s", name, out)
		}
	}
	for _, args := range [][]string{{"experiment", "nope"}, {"experiment", "corr", "--reps", "-1"}, {"experiment", "corr", "--workers", "0"}} {
		if _, stderr, code := vi(t, dir, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, code, stderr)
		}
	}
}

// vi experiment with no name lists the experiments on stderr and exits 2
// with a usage line, rather than exiting 0 having run nothing.
func TestExperimentNoName(t *testing.T) {
	stdout, stderr, code := vi(t, t.TempDir(), "experiment")
	if code != 2 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want exit 2 and nothing on stdout", code, stdout)
	}
	if !strings.Contains(stderr, "  corr ") || !strings.Contains(stderr, "vi: experiment: name an experiment, or all") {
		t.Errorf("stderr lacks the list or the usage line:\n%s", stderr)
	}
}

// --out names a directory that does not exist yet: vi makes it, parents
// and all, and writes the experiment's files there: corr at two
// repetitions (12 networks).
func TestExperimentMakesOutDir(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 12 networks")
	}
	dir := t.TempDir()
	stdout := viOK(t, dir, "experiment", "corr", "--reps", "2", "--workers", "2", "--out", "new/dir")
	for _, ext := range []string{"csv", "svg", "png", "md"} {
		if _, err := os.Stat(filepath.Join(dir, "new", "dir", "corr."+ext)); err != nil {
			t.Errorf("corr.%s not written into the new directory: %v", ext, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "new", "dir", "corr.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// A header, then 6 correlations x 2 repetitions x 2 features.
	if rows := strings.Count(string(b), "\n"); rows != 1+6*2*2 {
		t.Errorf("corr.csv: %d lines, want 25", rows)
	}
	if !strings.Contains(stdout, "wrote corr.{csv,svg,png,md} in new/dir") {
		t.Errorf("stdout does not say where the files went:\n%s", stdout)
	}
}

// An --out that cannot take files fails at once, before any experiment
// runs (all at the paper's repetitions would take hours), with one line
// and exit 2: a directory that cannot be written, one that cannot be
// made, and a file.
func TestExperimentUnwritableOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	outs := []string{file, filepath.Join(file, "sub")}
	switch {
	case os.Geteuid() != 0:
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, ro, filepath.Join(ro, "sub"))
	case runtime.GOOS == "linux":
		outs = append(outs, "/proc", "/proc/sub") // not writable, even by root
	}
	for _, out := range outs {
		stdout, stderr, code := vi(t, dir, "experiment", "all", "--out", out)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "vi: --out "+out+": ") {
			t.Errorf("--out %s: exit %d, stdout %q, stderr %q; want exit 2 and one line naming --out", out, code, stdout, stderr)
		}
	}
}
