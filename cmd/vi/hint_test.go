package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestInputHints: a word in a column of numbers and a missing value are
// refused with exit code 2 on one line that says what to do.
func TestInputHints(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "typo.csv"), "a,region,y\n1,north,2\n2,south,3\nx,east,4\n5,west,1\n")
	writeFile(t, filepath.Join(dir, "empty.csv"), "a,b,y\n1,,2\n2,3,3\n")
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"typo.csv", []string{`typo.csv: row 4, column "a": not a number: "x"`, "--categorical"}},
		{"empty.csv", []string{`empty.csv: 1 missing cell in 1 column: "b" 1 (row 2)`, "--missing drop", "--missing impute"}},
	} {
		for _, cmd := range []string{"estimate", "shapley", "train"} {
			args := []string{cmd, "--data", tc.file}
			if cmd == "train" {
				args = append(args, "--out", "m.vimodel")
			}
			_, stderr, code := vi(t, dir, args...)
			if code != 2 || strings.Count(stderr, "\n") != 1 {
				t.Errorf("vi %s: exit %d, stderr %q; want 2 and one line", strings.Join(args, " "), code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("vi %s: stderr lacks %q: %s", strings.Join(args, " "), w, stderr)
				}
			}
		}
	}
}
