package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/framework"
)

// newBackendsCommand makes "vi backends", which lists the model backends and their options.
func newBackendsCommand() *Command {
	return listCommand(&Command{
		UsageLine: "backends",
		Short:     "list the model backends and their options",
		Long: `Backends lists the built-in model backends, what their models can do, and the
options they take. Options are set on "vi estimate" with --opt key=value (and,
for the common ones, --hidden and --epochs); an option not set keeps the
backend's default.

Built-in backends run in vi's own process (with --backend-process, in a
subprocess: vi re-executes itself to serve one over the plugin protocol); an
external backend is any executable serving that protocol, named with
"vi estimate --plugin PATH", and runs in a subprocess.

  mlp     ReLU multilayer perceptron (the network whose importances lazy
          estimates)
  linear  OLS (logistic regression for a 0/1 response), optionally ridge; a
          linear model is its own linearisation, so lazy on it equals retrain
  forest  random forest of CART trees; no gradients: dropout and retrain only`,
	}, listBackends)
}

// newEstimatorsCommand makes "vi estimators", which lists the estimators.
func newEstimatorsCommand() *Command {
	return listCommand(&Command{
		UsageLine: "estimators",
		Short:     "list the estimators",
		Long:      `Estimators lists the variable importance estimators that --estimators accepts.`,
	}, listEstimators)
}

// newMeasuresCommand makes "vi measures", which lists the predictiveness measures.
func newMeasuresCommand() *Command {
	return listCommand(&Command{
		UsageLine: "measures",
		Short:     "list the predictiveness measures",
		Long: `Measures lists the predictiveness measures that --measure accepts and the tasks
each applies to. The default is mse for a real-valued response and logloss (a proper
scoring rule) for a 0/1 or class-label response; the header and the JSON
report give the full model's accuracy, and AUC for a 0/1 response, beside it.`,
	}, listMeasures)
}

// newVersionCommand makes "vi version", which prints the version.
func newVersionCommand() *Command {
	return listCommand(&Command{
		UsageLine: "version",
		Short:     "print the version",
		Long:      `Version prints vi's module version and the Go toolchain that built it.`,
	}, printVersion)
}

// listCommand makes c a command that takes no arguments and writes list to
// stdout.
func listCommand(c *Command, list func(w io.Writer) error) *Command {
	c.Run = func(_ context.Context, a *app, args []string) error {
		if err := noArgs(c, args); err != nil {
			return err
		}
		return list(a.stdout)
	}
	return c
}

func listBackends(w io.Writer) error {
	names := framework.Backends()
	if len(names) == 0 {
		fmt.Fprintln(w, "no backends registered")
		return nil
	}
	for i, name := range names {
		b, err := framework.LookupBackend(name)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n  capabilities: %s\n  estimators: %s\n", name, capabilityList(b.Capabilities()), supportedEstimators(b.Capabilities()))
		opts := b.Options()
		if len(opts) == 0 {
			fmt.Fprintln(w, "  options: none")
			continue
		}
		fmt.Fprintln(w, "  options:")
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		for _, o := range opts {
			fmt.Fprintf(tw, "    %s\t(default %s)\t%s\n", o.Name, o.Default, o.Usage)
		}
		tw.Flush()
	}
	return nil
}

// capabilityList names what a backend's models can do, with the
// estimators that need each capability in parentheses.
func capabilityList(c framework.Capabilities) string {
	out := []string{"regression"}
	if c.Classification {
		out = append(out, "binary")
	}
	if c.Multiclass {
		out = append(out, "multiclass")
	}
	if c.Gradients {
		out = append(out, "gradients"+neededBy(framework.Capabilities{Gradients: true}))
	}
	if c.Kernel {
		out = append(out, "structured NTK kernel")
	}
	if c.MatrixFree {
		out = append(out, "matrix-free Jacobian products")
	}
	if c.WarmStart {
		out = append(out, "warm start"+neededBy(framework.Capabilities{WarmStart: true}))
	}
	if c.WarmStop {
		out = append(out, "early-stopped warm start"+neededBy(framework.Capabilities{WarmStop: true}))
	}
	return strings.Join(out, ", ")
}

// neededBy lists, as " (a, b)", the registered estimators that need the
// capability c; "" when none does.
func neededBy(c framework.Capabilities) string {
	var out []string
	for _, name := range framework.Estimators() {
		e, err := framework.LookupEstimator(name)
		if err != nil {
			continue
		}
		if ok, _ := framework.Fits(e, framework.Capabilities{}); ok {
			continue // needs nothing
		}
		if ok, _ := framework.Fits(e, c); ok {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, ", ") + ")"
}

// supportedEstimators lists the registered estimators that run on a backend
// with these capabilities.
func supportedEstimators(c framework.Capabilities) string {
	var out []string
	for _, name := range framework.Estimators() {
		if e, err := framework.LookupEstimator(name); err == nil {
			if ok, _ := framework.Fits(e, c); ok {
				out = append(out, name)
			}
		}
	}
	return strings.Join(out, ", ")
}

func listEstimators(w io.Writer) error {
	names := framework.Estimators()
	if len(names) == 0 {
		fmt.Fprintln(w, "no estimators registered")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, name := range names {
		e, err := framework.LookupEstimator(name)
		if err != nil {
			return err
		}
		doc := ""
		if d, ok := e.(framework.Describer); ok {
			doc = d.Describe()
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, doc)
	}
	return tw.Flush()
}

func listMeasures(w io.Writer) error {
	names := framework.Measures()
	if len(names) == 0 {
		fmt.Fprintln(w, "no measures registered")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, name := range names {
		m, err := framework.LookupMeasure(name)
		if err != nil {
			return err
		}
		var tasks []string
		for _, t := range []framework.Task{framework.Regression, framework.Binary, framework.Multiclass} {
			if m.Supports(t) {
				task := t.String()
				if framework.DefaultMeasure(t) == name {
					task += " (default)"
				}
				tasks = append(tasks, task)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, strings.Join(tasks, ", "))
	}
	return tw.Flush()
}

func printVersion(w io.Writer) error {
	fmt.Fprintf(w, "vi %s %s %s/%s\n", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// version returns the main module's version and, when the build recorded
// it, the VCS revision.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " " + rev + modified
	}
	return v
}
