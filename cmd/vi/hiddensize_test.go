package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAbsurdHiddenRefused: --hidden 100000000 is a usage error (exit 2,
// one line) before any network is built, not a backend crash.
func TestAbsurdHiddenRefused(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(60))
	_, stderr, code := vi(t, dir, "estimate", "--data", "lin.csv", "--hidden", "100000000", "--repeats", "1", "--crossfit", "0")
	if code != 2 || !strings.Contains(stderr, "mlp: option hidden 100000000: a network of ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 2 and one line naming option hidden", code, stderr)
	}
}
