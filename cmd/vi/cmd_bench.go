package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/framework"
)

func newBenchCommand() *Command {
	return &Command{
		UsageLine: "bench <case> [flags]",
		Short:     "benchmark the estimators on named cases",
		Long: `Bench runs a named benchmark case and reports what it measures. Run
"vi bench" for the list of cases and "vi bench <case> --help" for a case's
flags.`,
		Run: runBench,
	}
}

// benchCase is one case of vi bench. Setup defines the case's flags on fs
// (a new flag set for every run) and returns the function that runs the
// case once fs is parsed; each case lives in its own file.
type benchCase struct {
	Name  string
	Short string
	Setup func(fs *flag.FlagSet) func(ctx context.Context, a *app) error
}

// benchCases are vi bench's cases in the order it lists them: the study
// harness of the inference options (coverage, study/coverage), then
// the user-facing cases, the user's data and the paper's settings.
var benchCases = append([]*benchCase{coverageBench, dataBench}, speedBenches...)

func runBench(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		listBenchCases(a.stdout)
		return nil
	}
	var c *benchCase
	for _, bc := range benchCases {
		if bc.Name == args[0] {
			c = bc
		}
	}
	if c == nil {
		names := make([]string, len(benchCases))
		for i, bc := range benchCases {
			names[i] = bc.Name
		}
		return framework.Usagef("bench: unknown case %q (cases: %s)", args[0], strings.Join(names, ", "))
	}
	fs := flag.NewFlagSet("bench "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	run := c.Setup(fs)
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(a.stdout, "usage: vi bench %s [flags]\n\n%s\n\nFlags:\n", c.Name, c.Short)
			printFlags(a.stdout, fs)
			return nil
		}
		return framework.Usagef("bench %s: %v (run 'vi bench %s --help')", c.Name, err, c.Name)
	}
	if fs.NArg() > 0 {
		return framework.Usagef("bench %s: unexpected argument %q", c.Name, fs.Arg(0))
	}
	return run(ctx, a)
}

func listBenchCases(w io.Writer) {
	fmt.Fprint(w, "usage: vi bench <case> [flags]\n\nThe cases are:\n\n")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range benchCases {
		fmt.Fprintf(tw, "\t%s\t%s\n", c.Name, c.Short)
	}
	tw.Flush()
}
