package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	if err := WriteFile(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("second")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "second" {
		t.Fatalf("read back %q, %v; want second", b, err)
	}
	// A failed write leaves the old file and no temporary one.
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want %v", err, boom)
	}
	if b, _ := os.ReadFile(path); string(b) != "second" {
		t.Errorf("after a failed write the file holds %q, want second", b)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := WriteFile(filepath.Join(path+"-missing", "x"), nil); err == nil {
		t.Error("write into a missing directory: want an error")
	}
}

// TestCheckWritable: what would make Write fail at the end of a run is
// found up front, and leaves nothing behind.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(filepath.Join(dir, "out.json")); err != nil {
		t.Errorf("a writable directory: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the check left %d files behind", len(ents))
	}
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for path, want := range map[string]string{
		filepath.Join(dir, "none", "x.png"): "directory " + filepath.Join(dir, "none") + " does not exist",
		filepath.Join(file, "x.png"):        file + " is not a directory",
		dir:                                 "is a directory",
		"/proc/x.json":                      "vi makes no new files under /dev or /proc",
	} {
		if err := CheckWritable(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	if os.Geteuid() != 0 { // root writes anywhere
		if err := CheckWritable(filepath.Join(ro, "x")); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("a read-only directory: %v", err)
		}
	}
}

// Writing over a directory fails and leaves no temporary file.
func TestWriteFileOverDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	for _, content := range []string{"first", "second"} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Errorf("want %q, got %q (%v)", content, b, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
	// A failing write (the target is a directory) leaves nothing behind.
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(sub, []byte("x")); err == nil {
		t.Error("writing over a non-empty directory succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("temporary files left: %v", ents)
	}
}
