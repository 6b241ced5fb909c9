// Package timing totals the wall time and flops of the named steps of a
// run's reductions, for benchmark reports (vi bench): an estimator says
// where its time goes through the Stages its context carries.
package timing

import (
	"context"
	"sync"
	"time"
)

// Stages collects the wall time and the counted flops of the named steps
// of the reductions run with a context that carries it (With), over
// all workers: an estimator says where its time goes by calling
// From(ctx).Start for each step (lazy: its kernel, penalty search,
// solve and predictions; retrain: training and prediction). The names are
// the estimator's own; nothing but the report reads them. vi bench reports
// each step's share of an estimator's time and its rate. A nil *Stages
// records nothing, so estimators need not check. It is safe for
// concurrent use.
type Stages struct {
	mu     sync.Mutex
	order  []string
	totals map[string]*StageTotal
}

// StageTotal is one step's totals: its wall time summed over the calls
// (and workers) and the flops counted for it (0 where none are counted).
type StageTotal struct {
	Name    string
	Seconds float64
	Flops   float64
}

type stagesKey struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s *Stages) context.Context {
	return context.WithValue(ctx, stagesKey{}, s)
}

// From returns the Stages ctx carries, or nil.
func From(ctx context.Context) *Stages {
	s, _ := ctx.Value(stagesKey{}).(*Stages)
	return s
}

// Start starts timing one call of step name and returns the function that
// ends it, adding the flops counted for the call (0: none counted).
func (s *Stages) Start(name string) (stop func(flops float64)) {
	if s == nil {
		return func(float64) {}
	}
	t0 := time.Now()
	return func(flops float64) { s.Add(name, time.Since(t0).Seconds(), flops) }
}

// Add adds seconds and flops to step name.
func (s *Stages) Add(name string, seconds, flops float64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.totals == nil {
		s.totals = map[string]*StageTotal{}
	}
	t, ok := s.totals[name]
	if !ok {
		t = &StageTotal{Name: name}
		s.totals[name] = t
		s.order = append(s.order, name)
	}
	t.Seconds += seconds
	t.Flops += flops
}

// Totals returns the steps' totals in the order they were first started.
func (s *Stages) Totals() []StageTotal {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StageTotal, len(s.order))
	for i, name := range s.order {
		out[i] = *s.totals[name]
	}
	return out
}
