//go:build unix

package atomicfile

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// openReader opens fifo's reading end without waiting for a writer, so
// that a writer finds a reader, and returns it ready for blocking reads.
func openReader(t *testing.T, fifo string) *os.File {
	t.Helper()
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.SetNonblock(int(r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestWritePipe: a named pipe is written to, not replaced by a file (nor
// is a character device such as /dev/null: as root, renaming over it
// would replace the system's /dev/null); a pipe without a reader is an
// error at once, not a wait that no signal ends.
func TestWritePipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	if err := WriteFile(fifo, []byte("nobody reads")); err == nil || !strings.Contains(err.Error(), "has no reader") {
		t.Errorf("a pipe without a reader: %v", err)
	}
	r := openReader(t, fifo)
	if err := CheckWritable(fifo); err != nil {
		t.Errorf("CheckWritable(pipe): %v", err)
	}
	if err := WriteFile(fifo, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); err != nil || string(b) != "through the pipe" {
		t.Errorf("the pipe's reader got %q, %v", b, err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v, %v", fi.Mode(), err)
	}
	if d, err := Resolve(os.DevNull); err != nil || !d.InPlace || d.Path != os.DevNull {
		t.Errorf("Resolve(%s) = %+v, %v; want in place", os.DevNull, d, err)
	}
	if err := CheckWritable(os.DevNull); err != nil {
		t.Errorf("CheckWritable(%s): %v", os.DevNull, err)
	}
	if _, err := Resolve("/dev/lazyvi-no-such-file"); err == nil {
		t.Error("a new file under /dev: want an error")
	}
}

// TestResolveRefuses: a block device and a socket are refused, by Write
// too, before anything is written.
func TestResolveRefuses(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	defer l.Close()
	if _, err := Resolve(sock); err == nil || !strings.Contains(err.Error(), "a socket") {
		t.Errorf("Resolve(socket): %v", err)
	}
	if err := WriteFile(sock, []byte("x")); err == nil {
		t.Error("WriteFile(socket) succeeded")
	}
	for _, blk := range []string{"/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1"} {
		fi, err := os.Stat(blk)
		if err != nil || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
			continue
		}
		if err := CheckWritable(blk); err == nil || !strings.Contains(err.Error(), "a block device") {
			t.Errorf("CheckWritable(%s): %v", blk, err)
		}
		break
	}
}

// TestWriteKeepsModeAndOwnLinks: a replaced file keeps its permission
// bits; a symbolic link of this user's is written through, the link kept
// and its target replaced.
func TestWriteKeepsModeAndOwnLinks(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "target.txt"), filepath.Join(dir, "link.txt")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o600); err != nil {
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
	fi, err := os.Stat(target)
	if b, _ := os.ReadFile(target); string(b) != "new" || err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the link's target holds %q with mode %v, want new with 0600", b, fi.Mode().Perm())
	}
}

// TestOthersLinkNotFollowed: a symbolic link another user owns (one
// planted in a shared directory, say) is not followed: its target keeps
// its bytes and the link itself is replaced. Needs root to make the link
// another user's.
func TestOthersLinkNotFollowed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a link to another user")
	}
	dir := t.TempDir()
	target, link := filepath.Join(dir, "victim.txt"), filepath.Join(dir, "planted.txt")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Skipf("cannot give the link away: %v", err)
	}
	if d, err := Resolve(link); err != nil || d.Path != link || d.InPlace {
		t.Errorf("Resolve(another user's link) = %+v, %v; want the link itself", d, err)
	}
	if err := WriteFile(link, []byte("report")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the planted link's target now holds %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the planted link was not replaced by the report: %v, %v", fi.Mode(), err)
	}
}
