package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A Destination is where Write puts a path's bytes.
type Destination struct {
	// Path is the file written: the path itself, or the target of a
	// symbolic link of this user's.
	Path string
	// InPlace: Path is opened and appended to, not replaced (a character
	// device, a named pipe, a path under /dev or /proc).
	InPlace bool
	// Perm is the replaced file's permission bits, 0644 for a new file.
	Perm os.FileMode
}

// Resolve says where and how Write writes path (see Write), or why it
// will not: a block device, a socket, or a new file under /dev or /proc
// (in words that follow the path, which the error does not repeat).
func Resolve(path string) (Destination, error) {
	d := Destination{Path: path, Perm: 0o644}
	if systemPath(path) {
		fi, err := os.Stat(path)
		if err != nil {
			return d, errors.New("vi makes no new files under /dev or /proc")
		}
		if err := special(fi); err != nil {
			return d, err
		}
		d.InPlace = true
		return d, nil
	}
	if li, err := os.Lstat(path); err == nil && li.Mode()&os.ModeSymlink != 0 && ownLink(li) {
		// Followed only where it resolves; a dangling link is replaced.
		if target, err := filepath.EvalSymlinks(path); err == nil {
			d.Path = target
		}
	}
	fi, err := os.Stat(d.Path)
	if err != nil {
		return d, nil // a new file (or an error Write's own calls report)
	}
	switch {
	case fi.IsDir():
		return d, nil // CheckWritable and the rename say so
	case fi.Mode().IsRegular():
		d.Perm = fi.Mode().Perm()
		return d, nil
	}
	if err := special(fi); err != nil {
		return d, err
	}
	d.InPlace = true
	return d, nil
}

// special refuses, in words that follow the path, what is neither a regular file, a character device nor
// a named pipe.
func special(fi os.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular(), m&os.ModeCharDevice != 0, m&os.ModeNamedPipe != 0:
		return nil
	case m&os.ModeDevice != 0:
		return errors.New("a block device: vi writes files, character devices and pipes")
	case m&os.ModeSocket != 0:
		return errors.New("a socket: vi writes files, character devices and pipes")
	case m.IsDir():
		return errors.New("is a directory")
	}
	return fmt.Errorf("not a file vi can write (mode %v)", m)
}

// systemPath reports whether path lies under /dev or /proc, whose entries
// vi writes in place and never replaces.
func systemPath(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for _, root := range []string{"/dev/", "/proc/"} {
		if strings.HasPrefix(abs+"/", root) && abs+"/" != root {
			return true
		}
	}
	return false
}
