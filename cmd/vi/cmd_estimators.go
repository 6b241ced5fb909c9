package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/lazyvi/lazyvi/framework"
)

// newEstimatorsCommand makes "vi estimators", which lists the estimators.
func newEstimatorsCommand() *Command {
	return listCommand(&Command{
		UsageLine: "estimators",
		Short:     "list the estimators",
		Long:      `Estimators lists the variable importance estimators that --estimators accepts.`,
	}, listEstimators)
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
