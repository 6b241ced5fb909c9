package experiment_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/lazyvi/lazyvi/experiment"
)

// Rerun one of the paper's experiments at one repetition and look at its
// table; res.WriteFiles(dir) would write its CSV, figure and note.
func Example() {
	e, err := experiment.Lookup("ntk-trace")
	if err != nil {
		log.Fatal(err)
	}
	res, err := e.Run(context.Background(), experiment.Options{Reps: 1, Seed: 1, Workers: 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Command())
	fmt.Println(strings.Join(res.Header, ","))
	fmt.Printf("%d rows, %d panel(s)\n", len(res.Rows), len(res.Plots))
	// Output:
	// vi experiment ntk-trace --reps 1 --seed 1
	// rep,n,test_rows,trace,trace_per_row
	// 5 rows, 1 panel(s)
}

// List the experiments with the repetitions the paper ran.
func ExampleAll() {
	for _, e := range experiment.All() {
		fmt.Println(e.Name, e.Reps)
	}
	// Output:
	// highdim 10
	// corr 10
	// time-error 10
	// binary 100
	// width 50
	// init 10
	// ntk-trace 5
	// shapley 20
	// roar-images 5
}
