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
// Where path leads decides how (Resolve): a regular file, or none yet, is
// replaced atomically and keeps its permission bits (a new file is 0644);
// a symbolic link of this user's is written through, its target replaced
// and the link kept, while another user's link (one planted in a shared
// directory, say) is never followed; a character device (/dev/null, a
// terminal), a named pipe, or any path under /dev or /proc (/dev/stdout
// redirected to a file) is written in place and appended to, as a shell's
// >> would; a block device or a socket is refused.
func Write(path string, write func(io.Writer) error) (err error) {
	d, err := Resolve(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d.InPlace {
		return writeInPlace(d.Path, write)
	}
	path = d.Path
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
	if err = f.Chmod(d.Perm); err != nil {
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

// writeInPlace appends what write writes to path, which is not replaced.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := openInPlace(path)
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
// Write could not: path refused by Resolve, a place written in place that
// this user may not write, path's directory missing or not a directory,
// path itself a directory, or a directory where no file can be created
// (it creates and removes a temporary file there, as Write would). The
// errors name the directory or the path, not a flag.
func CheckWritable(path string) error {
	d, err := Resolve(path)
	if err != nil {
		return err
	}
	if d.InPlace {
		if err := writable(d.Path); err != nil {
			return fmt.Errorf("cannot write to %s: %w", d.Path, err)
		}
		return nil
	}
	path = d.Path
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
