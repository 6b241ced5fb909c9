// Package plot draws the figures of lazyvi's reports: a forest plot of an
// estimate report (each feature's VI and interval per estimator), of a
// Shapley report, the curves of a ROAR report, in one style that reads
// projected on a wall or printed in grey, and the cost and error of timing
// runs (package bench), as PNG, SVG or PDF.
//
//	err := plot.Forest(report, "y").Save("vi.png")
//
// The vi command's --plot draws the same figures.
package plot

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/lazyvi/lazyvi/internal/atomicfile"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/workflows/roar"
	"github.com/lazyvi/lazyvi/workflows/shapley"
)

// Figure is a drawing of a report, ready to be written in any of Formats.
type Figure struct {
	write func(w io.Writer, format string) error
}

// Write draws the figure to w in format: png, svg or pdf.
func (f Figure) Write(w io.Writer, format string) error {
	if !slices.Contains(Formats, format) {
		return fmt.Errorf("plot: format %q (want png, svg or pdf)", format)
	}
	return f.write(w, format)
}

// Save draws the figure into the file path, in the format its extension
// names (.png, .svg or .pdf), atomically: a reader sees the old file or the
// whole new one.
func (f Figure) Save(path string) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := f.Write(&buf, format); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

// Forest is the forest plot of an estimate report: one row per feature,
// sorted by the VI of the report's first estimator (the first one asked),
// largest at the top, each estimator's VI with its interval.
// target names the response, for the axis' units ("": the response).
func Forest(rep *pipeline.Report, target string) Figure {
	return Figure{estimatePlot(rep, target).write}
}

// Shapley is the forest plot of a Shapley report: each feature's Shapley
// value with its interval, per reduced-model estimator, sorted by the
// first estimator's value, largest at the top.
func Shapley(rep *shapley.Report, target string) Figure {
	return Figure{shapleyPlot(rep, target).write}
}

// ROAR is the plot of a ROAR report: the measure on the evaluation rows
// against the share of features removed, one line per estimator and
// ordering.
func ROAR(rep *roar.Report, target string) Figure {
	return Figure{roarPlot(rep, target).write}
}
