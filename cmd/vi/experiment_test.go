package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
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
	for _, args := range [][]string{{"experiment", "nope"}, {"experiment", "corr", "--reps", "-1"}, {"experiment", "corr", "--out", filepath.Join(dir, "missing")}} {
		if _, stderr, code := vi(t, dir, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, code, stderr)
		}
	}
}

// An experiment writes its data, figure and markdown note: ntk-trace at
// one repetition (five small networks).
func TestExperimentWritesFiles(t *testing.T) {
	dir := t.TempDir()
	viOK(t, dir, "experiment", "ntk-trace", "--reps", "1", "--out", dir)
	b, err := os.ReadFile(filepath.Join(dir, "ntk-trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(ntkSizes) || rows[0][0] != "rep" {
		t.Errorf("ntk-trace.csv: %d rows, header %v; want a header and %d rows", len(rows), rows[0], len(ntkSizes))
	}
	png, err := os.ReadFile(filepath.Join(dir, "ntk-trace.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("ntk-trace.png: not a PNG (%v)", err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "ntk-trace.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("ntk-trace.svg: not an SVG (%v)", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "ntk-trace.md"))
	if err != nil || !bytes.Contains(md, []byte("`vi experiment ntk-trace --reps 1 --seed 1`")) || !bytes.Contains(md, []byte("![ntk-trace](ntk-trace.png)")) {
		t.Errorf("ntk-trace.md lacks the command or the figure:\n%s", md)
	}
}
