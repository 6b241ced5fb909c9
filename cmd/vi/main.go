// Command vi estimates the variable importance of neural networks, with
// standard errors and confidence intervals, by the dropout, retrain and lazy
// (LazyVI) estimators; it also estimates Shapley values and evaluates
// importance orderings by removing features (ROAR).
//
// Usage:
//
//	vi <command> [flags]
//
// The commands are:
//
//	estimate    estimate variable importance from a CSV file
//	shapley     estimate Shapley values of feature importance
//	roar        evaluate importance orderings by removing features and retraining (ROAR)
//	train       train the full models once and save them to a model file
//	merge       combine the shards of a run (vi estimate --shard) into its report
//	simulate    write a simulated data set and its true importances
//	bench       benchmark the estimators on named cases
//	experiment  rerun one of the LazyVI paper's experiments: data, figure and a markdown note
//	backends    list the model backends and their options
//	estimators  list the estimators
//	measures    list the predictiveness measures
//	version     print the version
//	help        show help for vi or a command
//
// Run "vi help <command>" for a command's flags. Exit codes: 0 success, 2 bad
// usage or bad input, 1 anything else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/flagmsg"
	"github.com/lazyvi/lazyvi/internal/heaplimit"
	"github.com/lazyvi/lazyvi/internal/interrupt"
	"github.com/lazyvi/lazyvi/internal/profile"
)

// Command is a vi subcommand, in the manner of cmd/go's base.Command. Each
// is built afresh for every run by its constructor, which binds the flags to
// an options struct of the command's own (as restic's cmd/restic does), so
// that two runs in one process share no flag values.
type Command struct {
	// Run runs the command with the arguments after the command name,
	// already parsed into Flag.
	Run func(ctx context.Context, a *app, args []string) error
	// UsageLine is the one-line usage message; its first word is the
	// command's name.
	UsageLine string
	// Short is the description shown in "vi help".
	Short string
	// Long is the description shown in "vi help <command>".
	Long string
	// Flag is the command's flag set.
	Flag flag.FlagSet
}

// Name returns the command's name: the first word of UsageLine.
func (c *Command) Name() string {
	name, _, _ := strings.Cut(c.UsageLine, " ")
	return name
}

// Usage writes the command's reference to w: a one-line synopsis, the
// usage line, examples and flags; long adds the description (Long), as
// docs/reference renders it.
func (c *Command) Usage(w io.Writer, long bool) {
	fmt.Fprintf(w, "vi %s: %s\n\nusage: vi %s\n", c.Name(), c.Short, c.UsageLine)
	if ex := commandExamples[c.Name()]; len(ex) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range ex {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	if long {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Long))
	}
	var n int
	c.Flag.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		printFlags(w, &c.Flag)
	}
	if !long {
		fmt.Fprintf(w, "\nDetails: vi help --long %s, or docs/reference/cli.md.\n", c.Name())
	}
	fmt.Fprintln(w, "Exit codes: 0 success, 2 bad usage or bad input, 1 anything else.")
}

// printFlags is flag.PrintDefaults with the double dash users type and
// float defaults shortened (0.6667, not 0.6666666666666666).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		def := f.DefValue
		if v, err := strconv.ParseFloat(def, 64); err == nil && strings.Contains(def, ".") {
			def = strconv.FormatFloat(v, 'g', 4, 64)
		}
		switch def {
		case "", "0", "false", "[]":
		default:
			usage += " (default " + def + ")"
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, strings.ReplaceAll(usage, "\n", "\n    \t"))
	})
}

// commands are the constructors of vi's commands, in the order "vi help"
// lists them.
var commands = []func() *Command{
	newEstimateCommand,
	newShapleyCommand,
	newROARCommand,
	newTrainCommand,
	newMergeCommand,
	newSimulateCommand,
	newBenchCommand,
	newExperimentCommand,
	newBackendsCommand,
	newEstimatorsCommand,
	newMeasuresCommand,
	newVersionCommand,
	newHelpCommand,
}

// newCommands builds every command, with fresh flag sets, in help order.
func newCommands() []*Command {
	cmds := make([]*Command, len(commands))
	for i, newCommand := range commands {
		c := newCommand()
		c.Flag.Init(c.Name(), flag.ContinueOnError)
		c.Flag.SetOutput(io.Discard)
		cmds[i] = c
	}
	return cmds
}

// app is one run of vi: its streams and its commands. run builds a new one
// each time, so that run is re-entrant.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	commands       []*Command
}

// serveBackendArg is the hidden first argument with which vi re-executes
// itself to serve a built-in backend over the plugin protocol.
const serveBackendArg = "__serve-backend"

func main() {
	stop := profile.Start(os.Stderr, len(os.Args) > 1 && os.Args[1] == serveBackendArg)
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run runs the command line args with the given streams and returns the
// exit code. Nothing it sets outlives the call.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) > 0 && args[0] == serveBackendArg {
		// Nothing may be written to stdout before the plugin handshake.
		return a.report(serveBackend(args[1:]))
	}
	// A backend subprocess keeps backendplugin's fixed limit; vi's own
	// process follows its live heap (heaplimit).
	heaplimit.Follow()
	a.commands = newCommands()
	if len(args) == 0 {
		a.printMainUsage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		a.printMainUsage(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	}
	cmd := a.lookupCommand(name)
	if cmd == nil {
		return a.report(framework.Usagef("unknown command %q (run 'vi help' for the list)", name))
	}
	if err := cmd.Flag.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			cmd.Usage(stdout, false)
			return exitOK
		}
		return a.report(framework.Usagef("%s: %v%s (run 'vi help %s')", cmd.Name(), err, flagmsg.Suggestion(&cmd.Flag, err), cmd.Name()))
	}
	ctx, stop := interrupt.Context(stderr, "vi")
	defer stop()
	err := cmd.Run(ctx, a, cmd.Flag.Args())
	if err != nil && !errors.Is(err, errInterrupted) {
		// A run a signal stopped says so, whatever stage it was in (a
		// command that says more, where its checkpoint is, has said it).
		err = runError(ctx, err)
	}
	return a.report(err)
}

// report prints err as one line, the library's names of settings replaced
// by the flags that set them (flagmsg.Error), and returns its exit code.
func (a *app) report(err error) int {
	if err == nil {
		return exitOK
	}
	msg := strings.Join(strings.Fields(flagmsg.Error(err)), " ")
	if hint := flagmsg.InputHint(err); hint != "" {
		msg += "; " + hint
	}
	fmt.Fprintf(a.stderr, "vi: %s\n", msg)
	if errors.Is(err, framework.ErrUsage) {
		return exitUsage
	}
	return exitError
}

func (a *app) lookupCommand(name string) *Command {
	for _, c := range a.commands {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

func (a *app) printMainUsage(w io.Writer) {
	fmt.Fprint(w, `vi estimates the variable importance (VI) of neural networks, with standard
errors and confidence intervals, by the dropout, retrain and lazy estimators.

Usage:

	vi <command> [flags]

The commands are:

`)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range a.commands {
		fmt.Fprintf(tw, "\t%s\t%s\n", c.Name(), c.Short)
	}
	tw.Flush()
	fmt.Fprint(w, `
Run "vi help <command>" for more about a command. Start with

	vi estimate

which estimates every feature's importance on a built-in data set.
`)
}

// noArgs returns a usage error when a command that takes no positional
// arguments got some.
func noArgs(cmd *Command, args []string) error {
	if len(args) > 0 {
		return framework.Usagef("%s: unexpected argument %q (flags go before it? run 'vi help %s')", cmd.Name(), args[0], cmd.Name())
	}
	return nil
}
