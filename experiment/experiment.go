// Package experiment reruns the experiments of the LazyVI paper (Gao,
// Stevens, Willett and Raskutti): each is an [Experiment] value with the
// paper's claim, its repetitions and a run that simulates its data,
// estimates, and returns its table, figure and notes as a [Result].
//
//	e, err := experiment.Lookup("corr")
//	res, err := e.Run(ctx, experiment.Options{Reps: 2})
//	err = res.WriteFiles("results") // corr.csv, corr.svg, corr.png, corr.md
//
// The vi command's "vi experiment" lists and runs them.
package experiment

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"github.com/lazyvi/lazyvi/framework"
)

// Experiment is one of the paper's experiments.
type Experiment struct {
	Name  string // as vi experiment names it: corr, highdim, ...
	Short string // the figure or table of the paper and what it shows
	// Claim is what the paper says the experiment shows, with its numbers
	// where it gives them (markdown).
	Claim string
	Reps  int // the paper's repetitions: Options.Reps' default

	run func(x *env) (*Result, error)
}

// MaxReps is the most repetitions an experiment runs: a hundred times the
// paper's ten, past which the figures' averages no longer move.
const MaxReps = 1000

// Options are how an experiment runs.
type Options struct {
	Reps    int   // repetitions, each a new data set and seed (0: the paper's, Experiment.Reps)
	Seed    int64 // seed of the first repetition; repetition r uses Seed + r
	Workers int   // features estimated concurrently (0: runtime.NumCPU())
	// Status, when set, is told what the run is doing ("corr: rho 0.2,
	// repetition 1/10"), e.g. to show it on a progress line.
	Status func(msg string)
}

// Result is what an experiment computed: its table, the panels of its
// figure (drawn side by side) and what the numbers show.
type Result struct {
	Experiment *Experiment
	Header     []string   // the table's columns
	Rows       [][]string // one row per repetition, estimator and feature (or the experiment's unit)
	Plots      []*plot.Plot
	// Notes say what the run shows, as markdown list items; a note that
	// starts with "  - " is an item under the note before.
	Notes   []string
	Reps    int     // the repetitions run
	Seed    int64   // the first repetition's seed
	Seconds float64 // the run's wall time
}

// env is what an experiment's run computes with.
type env struct {
	ctx     context.Context
	reps    int
	seed    int64
	workers int
	report  func(msg string)
}

// status tells Options.Status, when set, what the run is doing.
func (x *env) status(msg string) {
	if x.report != nil {
		x.report(msg)
	}
}

// registry holds the experiments in the order of All.
var registry []*Experiment

// order is the order of All (and of vi experiment's list and "all"): the
// paper's main claims first.
var order = []string{"highdim", "corr", "time-error", "binary", "width", "init", "ntk-trace", "shapley", "roar-images"}

// register adds e to the registry; each experiment registers itself from
// its file's init.
func register(e *Experiment) {
	registry = append(registry, e)
	rank := func(e *Experiment) int {
		if i := slices.Index(order, e.Name); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(registry, func(a, b *Experiment) int { return rank(a) - rank(b) })
}

// All returns the experiments, the paper's main claims first.
func All() []*Experiment { return slices.Clone(registry) }

// Lookup returns the experiment named name, or a usage error that names
// the experiments.
func Lookup(name string) (*Experiment, error) {
	for _, e := range registry {
		if e.Name == name {
			return e, nil
		}
	}
	names := make([]string, len(registry))
	for i, e := range registry {
		names[i] = e.Name
	}
	return nil, framework.Usagef("experiment: unknown experiment %q (experiments: %s)", name, strings.Join(names, ", "))
}

// Run runs the experiment with o's repetitions, seed and workers.
func (e *Experiment) Run(ctx context.Context, o Options) (*Result, error) {
	if o.Reps < 0 || o.Reps > MaxReps {
		return nil, framework.Usagef("experiment %s: repetitions must be from 1 to %d (0: the paper's count), got %d", e.Name, MaxReps, o.Reps)
	}
	if o.Workers < 0 {
		return nil, framework.Usagef("experiment %s: workers must be at least 1 (0: every CPU), got %d", e.Name, o.Workers)
	}
	x := &env{ctx: ctx, reps: o.Reps, seed: o.Seed, workers: o.Workers, report: o.Status}
	if x.reps == 0 {
		x.reps = e.Reps
	}
	if x.workers == 0 {
		x.workers = runtime.NumCPU()
	}
	start := time.Now()
	res, err := e.run(x)
	if err != nil {
		return nil, fmt.Errorf("experiment %s: %w", e.Name, err)
	}
	res.Experiment, res.Reps, res.Seed = e, x.reps, x.seed
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// Command is the vi command that reruns the result.
func (r *Result) Command() string {
	return fmt.Sprintf("vi experiment %s --reps %d --seed %d", r.Experiment.Name, r.Reps, r.Seed)
}
