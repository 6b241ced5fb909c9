//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// ownLink reports whether the symbolic link li is this user's: only those
// are followed, as the kernel's protected_symlinks follows only a link of
// the follower's in a shared directory.
func ownLink(li os.FileInfo) bool {
	st, ok := li.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// writable reports why this user may not write path.
func writable(path string) error {
	return syscall.Access(path, 2) // W_OK
}

// openInPlace opens path for appending. A named pipe is opened without
// waiting for a reader: one with none is an error at once, not a wait
// that no signal ends.
func openInPlace(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, errors.New("the named pipe has no reader")
	}
	if err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
