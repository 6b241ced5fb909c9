//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/lazyvi/lazyvi/internal/progress"
)

// openPTY opens a pseudo-terminal: its controller and the terminal end.
func openPTY(t *testing.T) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		ctl.Close()
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ctl.Close()
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ctl.Close()
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	return ctl, tty
}

// TestProgressOnTerminal: vi estimate with stdout redirected to a file
// and stderr a terminal, as in "vi estimate ... > out.txt": the bar is
// drawn on the terminal, whatever --format is, and the file holds the
// report alone.
func TestProgressOnTerminal(t *testing.T) {
	t.Setenv(progress.EnvVar, "")
	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(200))
			t.Chdir(dir)
			ctl, tty := openPTY(t)
			defer ctl.Close()
			var screen bytes.Buffer
			read := make(chan struct{})
			go func() {
				io.Copy(&screen, ctl) // ends with EIO once the terminal end is closed
				close(read)
			}()
			out, err := os.Create(filepath.Join(dir, "out.txt"))
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{"estimate", "--data", "data.csv", "--estimators", "dropout,retrain", "--format", format}, fastArgs...)
			code := run(args, strings.NewReader(""), out, tty)
			out.Close()
			tty.Close()
			<-read
			if code != 0 {
				t.Fatalf("exit %d: %s", code, screen.String())
			}
			if s := screen.String(); !strings.Contains(s, "\r\033[Kdropout/retrain ") || !strings.Contains(s, " eta ") {
				t.Errorf("no progress bar on the terminal: %q", s)
			}
			b, err := os.ReadFile(filepath.Join(dir, "out.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("\033")) || !bytes.Contains(b, []byte("dropout")) {
				t.Errorf("stdout's file is not the report alone: %q", b)
			}
		})
	}
}
