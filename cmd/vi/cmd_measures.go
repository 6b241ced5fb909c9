package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/framework"
)

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
				if t.DefaultMeasure() == name {
					task += " (default)"
				}
				tasks = append(tasks, task)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, strings.Join(tasks, ", "))
	}
	return tw.Flush()
}
