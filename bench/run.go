package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/simulate"
)

// Data times the estimators of o on a user's data (Time; o.Estimators
// must include retrain, the reference) and reports each other one's
// Agreement with retrain: what vi bench data runs.
func Data(ctx context.Context, in Input, o Options) (DataReport, error) {
	run, vis, err := Time(ctx, in, o)
	if err != nil {
		return DataReport{}, err
	}
	run.Case = "data"
	rep := DataReport{Report: run, Source: in.Data.Source, Target: in.Target}
	if rep.Target == "" {
		rep.Target = in.Data.Names[len(in.Data.Names)-1]
	}
	for _, e := range o.Estimators {
		if e.Name() != "retrain" {
			rep.Agreement = append(rep.Agreement, Agree(e.Name(), vis[e.Name()], vis["retrain"]))
		}
	}
	return rep, nil
}

// A Sweep is a simulated setting timed at several sizes and MLP widths:
// what vi bench linear, binary and highdim run.
type Sweep struct {
	Setting string   // simulate.Generate's setting
	Sizes   []int    // rows of each data set
	Widths  []string // the MLP's hidden widths, each comma-separated ("100,50")
	Rho     float64  // Corr(x1, x2) (simulate.Generate)
	Epochs  int      // the MLP's maximum training epochs (0: its default)
	// Status, when set, is told which size and width is starting.
	Status func(string)
}

// Run times o's estimators (Simulated) on a data set of each size drawn
// with o.Seed, with a network of each width, sizes outermost.
func (s Sweep) Run(ctx context.Context, o Options) ([]Report, error) {
	var runs []Report
	for _, n := range s.Sizes {
		for _, hidden := range s.Widths {
			sim, err := simulate.Generate(s.Setting, n, s.Rho, o.Seed)
			if err != nil {
				return nil, err
			}
			if s.Status != nil {
				s.Status(fmt.Sprintf("bench %s: n %d, width %s: training the full model", s.Setting, n, hidden))
			}
			ro := o
			ro.Options = map[string]string{"hidden": hidden}
			if s.Epochs > 0 {
				ro.Options["epochs"] = strconv.Itoa(s.Epochs)
			}
			r, err := Simulated(ctx, sim, ro)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// Widths reads a list of widths as vi bench's --width gives it: networks
// separated by commas, each one's layers by colons ("50,100:50": one
// layer of 50, then layers of 100 and 50).
func Widths(s string) []string {
	var out []string
	for _, w := range strings.Split(s, ",") {
		out = append(out, strings.ReplaceAll(strings.TrimSpace(w), ":", ","))
	}
	return out
}
