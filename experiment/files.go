package experiment

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/lazyvi/lazyvi/internal/atomicfile"
)

// WriteCSV writes the result's table as CSV: a header, then its rows.
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write(r.Header)
	cw.WriteAll(r.Rows)
	return cw.Error()
}

// DrawFigure draws the result's panels side by side, as format "svg" or
// "png".
func (r *Result) DrawFigure(w io.Writer, format string) error {
	if format != "svg" && format != "png" {
		return fmt.Errorf("experiment %s: figure format %q (want svg or png)", r.Experiment.Name, format)
	}
	return drawPanels(w, r.Plots, format)
}

// Markdown is the result's note: the command and the time it took, the
// figure, the paper's claim and what the run shows. It links NAME.csv and
// NAME.png, the files WriteFiles writes beside it.
func (r *Result) Markdown() string {
	e := r.Experiment
	var md strings.Builder
	fmt.Fprintf(&md, "### %s: %s\n\n", e.Name, e.Short)
	fmt.Fprintf(&md, "`%s` (%.0f s on the machine that ran it; data: [%s.csv](%s.csv))\n\n", r.Command(), r.Seconds, e.Name, e.Name)
	fmt.Fprintf(&md, "![%s](%s.png)\n\n", e.Name, e.Name)
	fmt.Fprintf(&md, "**The paper:** %s\n\n", e.Claim)
	fmt.Fprintf(&md, "**This run:**\n\n")
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "  - ") {
			fmt.Fprintf(&md, "%s\n", n) // an item under the note before
		} else {
			fmt.Fprintf(&md, "- %s\n", n)
		}
	}
	return md.String()
}

// WriteFiles writes NAME.csv, NAME.svg, NAME.png and NAME.md into dir,
// each atomically.
func (r *Result) WriteFiles(dir string) error {
	base := filepath.Join(dir, r.Experiment.Name)
	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(base+".csv", buf.Bytes()); err != nil {
		return err
	}
	for _, format := range []string{"svg", "png"} {
		var img bytes.Buffer
		if err := r.DrawFigure(&img, format); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(base+"."+format, img.Bytes()); err != nil {
			return err
		}
	}
	return atomicfile.WriteFile(base+".md", []byte(r.Markdown()))
}
