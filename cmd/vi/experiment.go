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
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"

	"github.com/lazyvi/lazyvi/framework"

	"github.com/lazyvi/lazyvi/internal/progress"

	"github.com/lazyvi/lazyvi/internal/atomicfile"
)

func newExperimentCommand() *Command {
	var list bool
	c := &Command{
		UsageLine: "experiment <name>|all [--reps R] [--out DIR] [flags]",
		Short:     "rerun one of the LazyVI paper's experiments: data, figure and a markdown note",
		Long: `Experiment reruns one of the LazyVI paper's experiments (Gao, Stevens,
Willett and Raskutti) and writes, under --out, NAME.csv (its data, one row
per repetition, estimator and feature), NAME.svg and NAME.png (its
figure) and NAME.md (a markdown fragment: the command, the time it took,
the paper's claim and what the run shows). --reps sets the repetitions (the
paper's count by default; 2 for a quick look). "vi experiment --list" names
the experiments; "vi experiment all" runs each in turn.`,
	}
	c.Flag.BoolVar(&list, "list", false, "name the experiments")
	c.Run = func(ctx context.Context, a *app, args []string) error {
		if list {
			args = nil
		}
		return runExperiment(ctx, a, args)
	}
	return c
}

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
	prog    *progress.Meter
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

// experimentOrder is the order of the list and of "all": the paper's
// main claims first.
var experimentOrder = []string{"highdim", "corr", "time-error", "binary", "width", "init", "ntk-trace", "shapley", "roar-images"}

func addExperiment(e *experiment) {
	experiments = append(experiments, e)
	rank := func(e *experiment) int {
		if i := slices.Index(experimentOrder, e.Name); i >= 0 {
			return i
		}
		return len(experimentOrder)
	}
	slices.SortStableFunc(experiments, func(a, b *experiment) int { return rank(a) - rank(b) })
}

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
	if len(args) == 0 {
		listExperiments(a.stdout)
		return nil
	}
	run := experiments
	if args[0] != "all" {
		e, err := lookupExperiment(args[0])
		if err != nil {
			return err
		}
		run = []*experiment{e}
	}
	fs := flag.NewFlagSet("experiment "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	reps := fs.Int("reps", 0, "repetitions, each a new data set and seed (0: the paper's count)")
	out := fs.String("out", ".", "write NAME.csv, NAME.svg, NAME.png and NAME.md into `DIR`")
	seed := fs.Int64("seed", 1, "seed of the first repetition (repetition r uses seed + r)")
	workers := fs.Int("workers", runtime.NumCPU(), "features estimated concurrently")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(a.stdout, "usage: vi experiment %s [flags]\n\n", args[0])
			if len(run) == 1 {
				fmt.Fprintf(a.stdout, "%s (the paper: %d repetitions)\n\n", run[0].Short, run[0].Reps)
			}
			fmt.Fprintln(a.stdout, "Flags:")
			printFlags(a.stdout, fs)
			return nil
		}
		return framework.Usagef("experiment %s: %v (run 'vi experiment %s --help')", args[0], err, args[0])
	}
	if fs.NArg() > 0 {
		return framework.Usagef("experiment %s: unexpected argument %q", args[0], fs.Arg(0))
	}
	if *reps < 0 {
		return framework.Usagef("--reps must be at least 1 (0: the paper's count), got %d", *reps)
	}
	if *workers < 1 {
		return framework.Usagef("--workers must be at least 1, got %d", *workers)
	}
	if fi, err := os.Stat(*out); err != nil || !fi.IsDir() {
		return framework.Usagef("--out %s: not a directory", *out)
	}
	for _, e := range run {
		r := *reps
		if r == 0 {
			r = e.Reps
		}
		if err := runOneExperiment(ctx, a, e, &expEnv{ctx: ctx, reps: r, seed: *seed, workers: *workers}, *out); err != nil {
			return err
		}
	}
	return nil
}

// runOneExperiment runs e and writes its files into dir.
func runOneExperiment(ctx context.Context, a *app, e *experiment, x *expEnv, dir string) error {
	x.prog = progress.New(a.stderr, progress.Auto, "experiment "+e.Name)
	defer x.prog.Close()
	start := time.Now()
	res, err := e.Run(x)
	if err != nil {
		return fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	x.prog.Clear()
	secs := time.Since(start).Seconds()
	cmd := fmt.Sprintf("vi experiment %s --reps %d --seed %d", e.Name, x.reps, x.seed)
	if err := writeExperiment(dir, e, res, cmd, secs); err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintln(a.stdout, n)
	}
	fmt.Fprintf(a.stdout, "wrote %s.{csv,svg,png,md} in %s (%.0f s)\n", e.Name, dir, secs)
	return nil
}

func listExperiments(w io.Writer) {
	fmt.Fprint(w, "usage: vi experiment <name>|all [--reps R] [--out DIR]\n\nThe experiments (all: each in turn):\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, e := range experiments {
		fmt.Fprintf(tw, "\t%s\t%s (the paper: %d repetitions)\n", e.Name, e.Short, e.Reps)
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
	if err := atomicfile.WriteFile(base+".csv", buf.Bytes()); err != nil {
		return err
	}
	for _, format := range []string{"svg", "png"} {
		var img bytes.Buffer
		if err := drawPanels(&img, res.Plots, format); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(base+"."+format, img.Bytes()); err != nil {
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
	return atomicfile.WriteFile(base+".md", []byte(md.String()))
}
