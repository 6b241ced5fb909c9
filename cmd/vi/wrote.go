package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/lazyvi/lazyvi/internal/atomicfile"
)

// writeAnnounced writes data to path atomically (atomicfile.WriteFile) and
// says on stderr what it wrote: "vi: wrote PATH (WHAT)", "replaced" when
// a regular file was there before, so that no earlier output is
// overwritten silently (a device such as /dev/null or a pipe is written
// to, not replaced). what may be "".
func (a *app) writeAnnounced(path, what string, data []byte) error {
	d, _ := atomicfile.Resolve(path)
	fi, statErr := os.Stat(d.Path)
	if err := atomicfile.WriteFile(path, data); err != nil {
		return err
	}
	verb := "wrote"
	if statErr == nil && fi.Mode().IsRegular() && !d.InPlace {
		verb = "replaced"
	}
	if what != "" {
		what = " (" + what + ")"
	}
	fmt.Fprintf(a.stderr, "vi: %s %s%s\n", verb, path, what)
	return nil
}

// emitAs writes the output to path, announced as what (writeAnnounced),
// or to stdout when path is "".
func (a *app) emitAs(path, what string, buf *bytes.Buffer) error {
	if path == "" {
		_, err := a.stdout.Write(buf.Bytes())
		return err
	}
	return a.writeAnnounced(path, what, buf.Bytes())
}

// writePlot draws a plot into path, atomically, and says so; nothing
// when path is "".
func (a *app) writePlot(path, what string, draw func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	var img bytes.Buffer
	if err := draw(&img); err != nil {
		return fmt.Errorf("--plot %s: %w", path, err)
	}
	return a.writeAnnounced(path, what, img.Bytes())
}
