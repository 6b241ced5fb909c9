package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestREADME checks that the README shows this program verbatim, as a Go
// code block: the README's example is the program the next test runs.
func TestREADME(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := fencedBlocks(string(readme), "go")
	for _, b := range blocks {
		if b == string(src) {
			return
		}
	}
	t.Errorf("README.md has no ```go block equal to examples/library/main.go (%d go blocks); paste the file into the README", len(blocks))
}

// fencedBlocks returns the contents of the Markdown code blocks fenced
// with ```lang, each ending in a newline.
func fencedBlocks(md, lang string) []string {
	var out []string
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(md, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		switch {
		case cur == nil && trimmed == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return out
}

// TestRun builds the program and runs it on a small simulated data set
// (the linear setting, n 300, Corr(x1, x2) 0.5): a line per feature and
// estimator, and x3 (true VI 1) found by every estimator.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains the full model nine times")
	}
	bin := filepath.Join(t.TempDir(), "library")
	gotool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(gotool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, filepath.Join("testdata", "small.csv"), "y")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("library testdata/small.csv y: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 1+6*2 || !strings.HasPrefix(lines[0], "measure mse, 300 evaluation rows") {
		t.Fatalf("want a header and 12 results, got:\n%s", stdout.String())
	}
	found := map[string]bool{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if f[0] == "x3" {
			// "x3 lazy vi 0.9 se ... p 1e-10"
			if p := f[len(f)-1]; !strings.Contains(p, "e-") && p != "0" {
				t.Errorf("x3 (true VI 1) not significant: %s", l)
			}
			found[f[1]] = true
		}
	}
	if len(found) != 2 {
		t.Errorf("x3 found by %v, want lazy and dropout:\n%s", found, stdout.String())
	}
}

// TestUsage checks the program's refusal of a wrong command line.
func TestUsage(t *testing.T) {
	if os.Getenv("LIBRARY_USAGE") == "1" {
		os.Args = []string{"library"}
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUsage$")
	cmd.Env = append(os.Environ(), "LIBRARY_USAGE=1")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "usage: library FILE.csv TARGET") {
		t.Errorf("no arguments: %v, %q; want exit 2 and the usage", err, out)
	}
}
