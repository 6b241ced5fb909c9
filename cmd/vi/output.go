package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/atomicfile"
	"github.com/lazyvi/lazyvi/plot"
	"github.com/lazyvi/lazyvi/report"
)

// checkOutDir reports, as a usage error naming flag, an output path that
// could not be written (atomicfile.CheckWritable: a missing directory, no
// permission, a directory in its place), so that a run does not fail only
// at its very end.
func checkOutDir(flag, path string) error {
	if err := atomicfile.CheckWritable(path); err != nil {
		return framework.Usagef("%s %s: %v", flag, path, err)
	}
	return nil
}

// fileFlag is a flag that names a file, and the file's path.
type fileFlag struct{ flag, path string }

// checkNotInput reports (a usage error) the first output in outs that is
// the same file as an input in ins (os.SameFile). Paths "" and "-", and
// files that do not exist, are skipped.
func checkNotInput(outs, ins []fileFlag) error {
	for _, o := range outs {
		ofi, ok := statFile(o.path)
		if !ok {
			continue
		}
		for _, in := range ins {
			if ifi, ok := statFile(in.path); ok && os.SameFile(ofi, ifi) {
				same := "is"
				if filepath.Clean(o.path) != filepath.Clean(in.path) {
					same = "is the same file as"
				}
				return framework.Usagef("%s %s %s %s %s: it would be overwritten; write the output to another file",
					o.flag, o.path, same, in.flag, in.path)
			}
		}
	}
	return nil
}

func statFile(path string) (os.FileInfo, bool) {
	if path == "" || path == "-" {
		return nil, false
	}
	fi, err := os.Stat(path)
	return fi, err == nil
}

// namedValue is a number of a report and what it is, for checkFinite.
type namedValue struct {
	name string
	v    float64
}

// checkFinite reports the first value that is NaN or infinite, naming
// where it is (framework.ErrNonFinite): a report must not carry one (JSON
// cannot) and a run must not succeed with one.
func checkFinite(where string, vals ...namedValue) error {
	for _, nv := range vals {
		if math.IsNaN(nv.v) || math.IsInf(nv.v, 0) {
			return fmt.Errorf("%s: %s is %g: %w (extreme values in the data, or a model that diverged)", where, nv.name, nv.v, framework.ErrNonFinite)
		}
	}
	return nil
}

// emit writes the bytes to path atomically, saying so on stderr, or to
// stdout when path is "".
func (a *app) emit(path string, buf *bytes.Buffer) error { return a.emitAs(path, "", buf) }

// render writes v as JSON when format is "json", else as table writes it.
func render(format string, v any, table func(io.Writer)) (*bytes.Buffer, error) {
	var buf bytes.Buffer
	if format == "json" {
		if err := report.WriteJSON(&buf, v); err != nil {
			return nil, err
		}
		return &buf, nil
	}
	table(&buf)
	return &buf, nil
}

// checkPlot checks --plot: its format, from the extension, and that it is
// not --out. It returns the format ("" without --plot).
func checkPlot(path, out string) (string, error) {
	if path == "" {
		return "", nil
	}
	if path == out {
		return "", framework.Usagef("--plot and --out name the same file %s", path)
	}
	format, err := plot.Format(path)
	if err != nil {
		return "", framework.Usagef("--plot %s: want a .png, .svg or .pdf file", path)
	}
	return format, nil
}
