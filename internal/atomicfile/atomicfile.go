// Package atomicfile writes files so that a reader sees either the old
// file or the complete new one, never a part.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteFile writes data to path so that readers see either the old
// file or the complete new one: a temporary file in the same directory,
// synced, then renamed over path. On error path is left as it was.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write is WriteFile of what write writes, streamed to the
// temporary file (a model file need not be held in memory twice).
//
// A path that names a symbolic link is written through it: the link's
// target is replaced and the link kept. A path that is not a regular file
// (a device such as /dev/null or /dev/stdout, a named pipe) is written to
// directly, as a shell's redirection would: renaming over it would replace
// the device or pipe with a file.
func Write(path string, write func(io.Writer) error) (err error) {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeSpecial(path, write)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Make the rename durable; not every platform can sync a directory.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// writeSpecial writes to path, which is not a regular file, in place.
func writeSpecial(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckWritable reports, before any work that ends in writing path, why
// Write could not: path's directory missing or not a directory, path
// itself a directory, or a directory where no file can be created (it
// creates and removes a temporary file there, as Write would). The
// errors name the directory or the path, not a flag.
func CheckWritable(path string) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode()&(os.ModeDevice|os.ModeNamedPipe) != 0 {
		// Written in place (Write): its directory need not take files. A
		// device must open for writing; a pipe's open would wait for its
		// reader, so only its permission bits are looked at.
		if fi.Mode()&os.ModeNamedPipe != 0 {
			if fi.Mode().Perm()&0o222 == 0 {
				return fmt.Errorf("named pipe %s is not writable", path)
			}
			return nil
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot write to %s: %w", path, errors.Unwrap(err))
		}
		return f.Close()
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil && os.IsNotExist(err):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("is a directory")
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check*")
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write in directory %s: %w", dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}
