package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTinyColumnsRefused: a response (or a feature) whose values vary by
// 1e-170 is refused before any fit, exit 2, one line naming the file and
// the column and saying to rescale, and leaves no OUT.partial; the same
// data scaled by 1e100 runs.
func TestTinyColumnsRefused(t *testing.T) {
	dir := t.TempDir()
	csv := func(name string, fy, fx float64) {
		var b strings.Builder
		b.WriteString("x1,x2,y\n")
		for i := 0; i < 60; i++ {
			x1, x2 := float64(i%7)-3, float64(i%5)-2
			fmt.Fprintf(&b, "%g,%g,%g\n", x1*fx, x2, (2*x1+float64(i%3))*fy)
		}
		writeFile(t, filepath.Join(dir, name), b.String())
	}
	csv("y.csv", 1e-170, 1)
	csv("x.csv", 1, 1e-160)
	csv("ok.csv", 1e-70, 1)
	for _, c := range []struct{ file, column string }{{"y.csv", `column "y"`}, {"x.csv", `column "x1"`}} {
		_, stderr, code := vi(t, dir, "estimate", "--data", c.file, "--epochs", "2", "--hidden", "4", "--repeats", "1", "--crossfit", "0", "--out", "r.json", "--format", "json")
		want := "vi: " + c.file + ", " + c.column + ": its values vary by at most "
		if code != 2 || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "rescale the column") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line starting %q", c.file, code, stderr, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "r.json.partial")); err == nil {
			t.Errorf("%s: r.json.partial left", c.file)
		}
	}
	viOK(t, dir, "estimate", "--data", "ok.csv", "--epochs", "2", "--hidden", "4", "--repeats", "1", "--crossfit", "0", "--estimators", "dropout")
}
