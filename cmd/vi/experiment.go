package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"

	"github.com/lazyvi/lazyvi/framework"
)

func newExperimentCommand() *Command {
	return &Command{
		UsageLine: "experiment <name> [--reps R] [--out DIR] [flags]",
		Short:     "rerun one of the LazyVI paper's experiments: data, figure and a markdown note",
		Long: `Experiment reruns one of the LazyVI paper's experiments (Gao, Stevens,
Willett and Raskutti) and writes, under --out, NAME.csv (its data, one row
per repetition, estimator and feature), NAME.svg and NAME.png (its
figure) and NAME.md (a markdown fragment: the command, the time it took,
the paper's claim and what the run shows). --reps sets the repetitions (the
paper's count by default; 2 for a quick look). "vi experiment --list" names
the experiments.`,
		Run: runExperiment,
	}
}

func init() { addCommand(newExperimentCommand) }

// experiment is one of the paper's experiments. Run computes its table,
// figure and notes with the environment's repetitions and seed; each
// experiment lives in its own file and registers itself with
// addExperiment from init.
type experiment struct {
	Name  string
	Short string
	// Claim is what the paper says the experiment shows, with its numbers
	// where it gives them (markdown).
	Claim string
	Reps  int // the paper's repetitions: --reps' default
	Run   func(x *expEnv) (*expOutput, error)
}

// expEnv is what an experiment runs with.
type expEnv struct {
	ctx     context.Context
	reps    int
	seed    int64
	workers int
	prog    *progress
}

// expOutput is what an experiment computed: its table (the CSV), the
// panels of its figure (drawn side by side) and what the numbers show, as
// markdown lines.
type expOutput struct {
	Header []string
	Rows   [][]string
	Plots  []*plot.Plot
	Notes  []string
}

var experiments []*experiment

func addExperiment(e *experiment) { experiments = append(experiments, e) }

func lookupExperiment(name string) (*experiment, error) {
	for _, e := range experiments {
		if e.Name == name {
			return e, nil
		}
	}
	names := make([]string, len(experiments))
	for i, e := range experiments {
		names[i] = e.Name
	}
	return nil, framework.Usagef("experiment: unknown experiment %q (experiments: %s)", name, strings.Join(names, ", "))
}

func runExperiment(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 || args[0] == "--list" || args[0] == "-list" {
		listExperiments(a.stdout)
		return nil
	}
	e, err := lookupExperiment(args[0])
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("experiment "+e.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	reps := fs.Int("reps", e.Reps, "repetitions (each a new data set and seed)")
	out := fs.String("out", ".", "write NAME.csv, NAME.svg, NAME.png and NAME.md into `DIR`")
	seed := fs.Int64("seed", 1, "seed of the first repetition (repetition r uses seed + r)")
	workers := fs.Int("workers", runtime.NumCPU(), "features estimated concurrently")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(a.stdout, "usage: vi experiment %s [flags]\n\n%s\n\nFlags:\n", e.Name, e.Short)
			printFlags(a.stdout, fs)
			return nil
		}
		return framework.Usagef("experiment %s: %v (run 'vi experiment %s --help')", e.Name, err, e.Name)
	}
	if fs.NArg() > 0 {
		return framework.Usagef("experiment %s: unexpected argument %q", e.Name, fs.Arg(0))
	}
	if *reps < 1 {
		return framework.Usagef("--reps must be at least 1, got %d", *reps)
	}
	if *workers < 1 {
		return framework.Usagef("--workers must be at least 1, got %d", *workers)
	}
	if fi, err := os.Stat(*out); err != nil || !fi.IsDir() {
		return framework.Usagef("--out %s: not a directory", *out)
	}
	prog := a.newProgress(true, "experiment "+e.Name)
	defer prog.clear()
	start := time.Now()
	res, err := e.Run(&expEnv{ctx: ctx, reps: *reps, seed: *seed, workers: *workers, prog: prog})
	if err != nil {
		return fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	prog.clear()
	secs := time.Since(start).Seconds()
	cmd := fmt.Sprintf("vi experiment %s --reps %d --seed %d", e.Name, *reps, *seed)
	if err := writeExperiment(*out, e, res, cmd, secs); err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintln(a.stdout, n)
	}
	fmt.Fprintf(a.stdout, "wrote %s.{csv,svg,png,md} in %s (%.0f s)\n", e.Name, *out, secs)
	return nil
}

func listExperiments(w io.Writer) {
	fmt.Fprint(w, "usage: vi experiment <name> [--reps R] [--out DIR]\n\nThe experiments:\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, e := range experiments {
		fmt.Fprintf(tw, "\t%s\t%s (%d reps)\n", e.Name, e.Short, e.Reps)
	}
	tw.Flush()
}

// writeExperiment writes the experiment's four files into dir, each
// atomically.
func writeExperiment(dir string, e *experiment, res *expOutput, cmd string, secs float64) error {
	base := filepath.Join(dir, e.Name)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write(res.Header)
	cw.WriteAll(res.Rows)
	if err := cw.Error(); err != nil {
		return err
	}
	if err := writeFileAtomic(base+".csv", buf.Bytes()); err != nil {
		return err
	}
	for _, format := range []string{"svg", "png"} {
		if err := writePlot(base+"."+format, func(w io.Writer) error { return drawPanels(w, res.Plots, format) }); err != nil {
			return err
		}
	}
	var md strings.Builder
	fmt.Fprintf(&md, "### %s: %s\n\n", e.Name, e.Short)
	fmt.Fprintf(&md, "`%s` (%.0f s on the machine that ran it; data: [%s.csv](%s.csv))\n\n", cmd, secs, e.Name, e.Name)
	fmt.Fprintf(&md, "![%s](%s.png)\n\n", e.Name, e.Name)
	fmt.Fprintf(&md, "**The paper:** %s\n\n", e.Claim)
	fmt.Fprintf(&md, "**This run:**\n\n")
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "  - ") {
			fmt.Fprintf(&md, "%s\n", n) // an item under the note before
		} else {
			fmt.Fprintf(&md, "- %s\n", n)
		}
	}
	return writeFileAtomic(base+".md", []byte(md.String()))
}
