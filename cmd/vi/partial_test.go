package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutPartialNotACheckpoint: --out notes with an unrelated notes.partial
// (not a checkpoint of vi) refuses the run, exit 2 in one line, and leaves
// the file as it was; a checkpoint of another run is replaced, saying so.
func TestOutPartialNotACheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(80))
	args := append([]string{"estimate", "--data", "lin.csv", "--estimators", "dropout", "--repeats", "1", "--crossfit", "0"}, fastArgs[:4]...)
	for _, content := range []string{"my notes\nline two\n", "", `{"version":3}` + "\n"} {
		writeFile(t, filepath.Join(dir, "notes.partial"), content)
		_, stderr, code := vi(t, dir, append(args, "--out", "notes")...)
		want := "vi: notes.partial: exists and is not a lazyvi checkpoint"
		if code != 2 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("notes.partial %q: exit %d, stderr %q; want exit 2 and one line %q", content, code, stderr, want)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "notes.partial")); err != nil || string(b) != content {
			t.Errorf("notes.partial %q: now %q (%v), want it untouched", content, b, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "notes")); err == nil {
			t.Errorf("notes.partial %q: notes written", content)
		}
	}
	writeFile(t, filepath.Join(dir, "notes.partial"), `{"lazyvi_checkpoint":4,"fingerprint":"another run"}`+"\n")
	_, stderr, code := vi(t, dir, append(args, "--out", "notes")...)
	if code != 0 || !strings.Contains(stderr, "vi: notes.partial is a checkpoint of another run") {
		t.Errorf("another run's checkpoint: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.partial")); err == nil {
		t.Error("notes.partial left after a successful run")
	}
}
