package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two commands in one process share no flag values: each run builds its
// commands and their flag sets afresh. (When the flags were package
// variables, simulate --n 30 followed by simulate wrote 30 rows twice.)
func TestRunIsReentrant(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		rows int
	}{
		{[]string{"simulate", "--n", "30", "--out", "a.csv"}, 30},
		{[]string{"simulate", "--out", "b.csv"}, 1000}, // --n's default
	} {
		if _, stderr, code := vi(t, dir, c.args...); code != 0 {
			t.Fatalf("vi %s: exit %d: %s", strings.Join(c.args, " "), code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, c.args[len(c.args)-1]))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Count(b, []byte("\n")) - 1; got != c.rows {
			t.Errorf("vi %s wrote %d rows, want %d", strings.Join(c.args, " "), got, c.rows)
		}
	}

	// The shared flag groups too: a bad --level in one run is not the
	// next run's.
	if _, stderr, code := vi(t, dir, "estimate", "--level", "2"); code != 2 || !strings.Contains(stderr, "--level") {
		t.Fatalf("estimate --level 2: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := vi(t, dir, "estimate", "--data", "nosuch.csv"); code != 2 || !strings.Contains(stderr, "nosuch.csv: no such file") {
		t.Errorf("estimate after a bad --level: exit %d, stderr %q; want the missing file", code, stderr)
	}
}

// The package documentation lists the commands that vi help lists.
func TestDocListsCommands(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "package ") {
			break
		}
		doc = append(doc, strings.Join(strings.Fields(strings.TrimPrefix(line, "//")), " "))
	}
	docText := strings.Join(doc, "\n")
	for _, c := range newCommands() {
		if want := c.Name() + " " + c.Short; !strings.Contains(docText, want) {
			t.Errorf("main.go's package documentation lacks %q", want)
		}
	}
}
