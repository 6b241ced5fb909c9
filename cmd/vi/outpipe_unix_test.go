//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lazyvi/lazyvi/pipeline"
)

// TestOutToPipe: --out naming a named pipe (as /dev/null or a shell's
// process substitution is not a file) writes the report into the pipe,
// keeps the pipe, says "wrote", and keeps no checkpoint beside it (for
// /dev/null that would be a file in /dev).
func TestOutToPipe(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(120))
	pipe := filepath.Join(dir, "report")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	// The reading end opened first, without waiting for a writer: vi
	// refuses a pipe that has no reader.
	r, err := os.OpenFile(pipe, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := syscall.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := vi(t, dir, append([]string{"estimate", "--data", "data.csv", "--out", "report", "--estimators", "dropout,retrain"}, fastArgs...)...)
	if code != 0 || !strings.Contains(stderr, "vi: wrote report") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	// The report is in the pipe's buffer (under its 64 KiB): read once vi
	// has closed its end.
	if b, err := io.ReadAll(r); err != nil || !strings.Contains(string(b), "x1") {
		t.Errorf("the pipe's reader got %q, %v", b, err)
	}
	if fi, err := os.Lstat(pipe); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v, %v", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*partial*")); len(left) > 0 {
		t.Errorf("checkpoint files beside the pipe: %v", left)
	}
	if c, err := openCheckpoint(&app{stderr: io.Discard}, &pipeline.RunID{}, pipe, nil); c != nil || err != nil {
		t.Errorf("a run writing to a pipe opened checkpoint %v (%v)", c, err)
	}
}
