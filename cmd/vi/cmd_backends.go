package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
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
		fmt.Fprintf(w, "%s\n  capabilities: %s\n  estimators: %s\n", name, capabilityList(b.Capabilities()), strings.Join(pipeline.RunnableEstimators(b.Capabilities()), ", "))
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
	if out := pipeline.EstimatorsNeeding(c); len(out) > 0 {
		return " (" + strings.Join(out, ", ") + ")"
	}
	return ""
}
