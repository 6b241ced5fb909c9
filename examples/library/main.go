// Command library estimates the variable importance of every feature of a
// CSV file as "vi estimate" does, through the lazyvi package:
//
//	go run ./examples/library lin.csv y
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/lazyvi/lazyvi"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/pipeline"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: library FILE.csv TARGET")
		os.Exit(2)
	}
	ctx := context.Background()
	d, err := dataio.LoadCSV(ctx, os.Args[1]) // or lazyvi.Diabetes()
	if err != nil {
		log.Fatal(err)
	}
	// Zero fields take vi estimate's defaults (see lazyvi.Options): the
	// mlp backend, lazy and dropout, the task's measure, the default
	// inference.
	rep, err := lazyvi.Run(ctx, d, lazyvi.Options{
		Config: pipeline.Config{Target: os.Args[2], Seed: 1},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("measure %s, %d evaluation rows\n", rep.Measure, rep.NEval)
	for _, r := range rep.Results {
		fmt.Printf("%-8s %-8s vi %8.4f  se %.4f  interval [%.4f, %.4f]  p %.3g\n",
			r.Feature, r.Estimator, r.VI, r.SE, r.CILow, r.CIHigh, r.PValue)
	}
}
