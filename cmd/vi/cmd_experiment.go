package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/experiment"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
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
			listExperiments(a.stdout)
			return nil
		}
		return runExperiment(ctx, a, args)
	}
	return c
}

// experimentFlags are the flags of vi experiment NAME.
type experimentFlags struct {
	reps    int
	out     string
	seed    int64
	workers int
}

func (f *experimentFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.reps, "reps", 0, "repetitions, each a new data set and seed (0: the paper's count)")
	fs.StringVar(&f.out, "out", ".", "write NAME.csv, NAME.svg, NAME.png and NAME.md into `DIR` (created if missing)")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the first repetition (repetition r uses seed + r)")
	fs.IntVar(&f.workers, "workers", runtime.NumCPU(), "features estimated concurrently")
}

// check reports bad flags, and makes --out and checks that it takes
// files, before anything is computed.
func (f *experimentFlags) check() error {
	if f.reps < 0 || f.reps > experiment.MaxReps {
		return framework.Usagef("--reps must be from 1 to %d (0: the paper's count), got %d", experiment.MaxReps, f.reps)
	}
	if f.workers < 1 {
		return framework.Usagef("--workers must be at least 1, got %d", f.workers)
	}
	return checkOutputDir(f.out)
}

// checkOutputDir makes dir (and its parents) when it is missing and
// checks that a file can be written into it.
func checkOutputDir(dir string) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return framework.Usagef("--out %s: not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return framework.Usagef("--out %s: cannot make the directory: %v", dir, errors.Unwrap(err))
	}
	f, err := os.CreateTemp(dir, ".vi-experiment-*")
	if err != nil {
		return framework.Usagef("--out %s: cannot write into the directory: %v", dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

func runExperiment(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		listExperiments(a.stderr)
		return framework.Usagef("experiment: name an experiment, or all (vi experiment <name>|all [--reps R] [--out DIR])")
	}
	run := experiment.All()
	if args[0] != "all" {
		e, err := experiment.Lookup(args[0])
		if err != nil {
			return err
		}
		run = []*experiment.Experiment{e}
	}
	fs := flag.NewFlagSet("experiment "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f experimentFlags
	f.register(fs)
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
	if err := f.check(); err != nil {
		return err
	}
	for _, e := range run {
		if err := runOneExperiment(ctx, a, e, f); err != nil {
			return err
		}
	}
	return nil
}

// runOneExperiment runs e, writes its files into --out and prints its
// notes.
func runOneExperiment(ctx context.Context, a *app, e *experiment.Experiment, f experimentFlags) error {
	prog := progress.New(a.stderr, progress.Auto, "experiment "+e.Name)
	defer prog.Close()
	res, err := e.Run(ctx, experiment.Options{Reps: f.reps, Seed: f.seed, Workers: f.workers, Status: prog.SetStatus})
	if err != nil {
		return err
	}
	prog.Clear()
	if err := res.WriteFiles(f.out); err != nil {
		return err
	}
	for _, n := range res.Notes {
		fmt.Fprintln(a.stdout, n)
	}
	fmt.Fprintf(a.stdout, "wrote %s.{csv,svg,png,md} in %s (%.0f s)\n", e.Name, f.out, res.Seconds)
	return nil
}

func listExperiments(w io.Writer) {
	fmt.Fprint(w, "usage: vi experiment <name>|all [--reps R] [--out DIR]\n\nThe experiments (all: each in turn):\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, e := range experiment.All() {
		fmt.Fprintf(tw, "\t%s\t%s (the paper: %d repetitions)\n", e.Name, e.Short, e.Reps)
	}
	tw.Flush()
}
