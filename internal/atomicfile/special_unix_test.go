//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteSpecialFiles: a named pipe is written to, not replaced by a
// file (nor is a device such as /dev/null: as root, renaming over it would
// replace the system's /dev/null); a symbolic link is written through, the
// link kept and its target replaced.
func TestWriteSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo) // opens the reading end, reads to EOF
		got <- b
	}()
	if err := CheckWritable(fifo); err != nil {
		t.Errorf("CheckWritable(pipe): %v", err)
	}
	if err := WriteFile(fifo, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if string(b) != "through the pipe" {
			t.Errorf("the pipe's reader got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Error("the pipe's reader got nothing in 10 s")
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v, %v", fi.Mode(), err)
	}
	if err := CheckWritable(os.DevNull); err != nil {
		t.Errorf("CheckWritable(%s): %v", os.DevNull, err)
	}

	target, link := filepath.Join(dir, "target.txt"), filepath.Join(dir, "link.txt")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("the link's target holds %q, want new", b)
	}
}
