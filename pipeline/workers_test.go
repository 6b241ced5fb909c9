package pipeline_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// goroutinePeak is an estimator that records the most goroutines it saw
// while reducing.
type goroutinePeak struct {
	shift
	mu   *sync.Mutex
	peak *int
}

func (g goroutinePeak) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	g.mu.Lock()
	*g.peak = max(*g.peak, runtime.NumGoroutine())
	g.mu.Unlock()
	return g.shift.Reduce(ctx, p, f)
}

// meanProblem is a problem of 100 rows and 3 features whose full model
// predicts the mean, closed when the test ends.
func meanProblem(t *testing.T) *framework.Problem {
	t.Helper()
	p, err := pipeline.Prepare(context.Background(), dataset(100, 3), pipeline.Config{Backend: meanBackend{}, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// TestReduceWorkersCapped: a worker count far above the jobs starts no
// more goroutines than there are jobs (--workers 1000000 took 5 GB), nor
// more than MaxWorkers when the jobs are many.
func TestReduceWorkersCapped(t *testing.T) {
	ctx := context.Background()
	p := meanProblem(t)
	var mu sync.Mutex
	peak := 0
	before := runtime.NumGoroutine()
	feats := []framework.Feature{{Name: "a", Columns: []int{0}}, {Name: "b", Columns: []int{1}}}
	_, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{goroutinePeak{shift{0.5}, &mu, &peak}}, feats, pipeline.ReduceOptions{Workers: 50000})
	if err != nil {
		t.Fatal(err)
	}
	if peak > before+len(feats)+5 {
		t.Errorf("%d goroutines while reducing 2 features with 50000 workers (%d before); want at most one a job", peak, before)
	}
}

// TestReduceWorkersMax: with more jobs than MaxWorkers, at most MaxWorkers
// reductions run at once.
func TestReduceWorkersMax(t *testing.T) {
	ctx := context.Background()
	p := meanProblem(t)
	var feats []framework.Feature
	for i := range 3 * pipeline.MaxWorkers() {
		feats = append(feats, framework.Feature{Name: fmt.Sprint(i), Columns: []int{i % 3}})
	}
	var mu sync.Mutex
	peak := 0
	before := runtime.NumGoroutine()
	_, err := pipeline.Reduce(ctx, []*framework.Problem{p}, []framework.Estimator{goroutinePeak{shift{0.5}, &mu, &peak}}, feats, pipeline.ReduceOptions{Workers: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	if peak > before+pipeline.MaxWorkers()+5 {
		t.Errorf("%d goroutines while reducing %d features with 1e6 workers (%d before); want at most MaxWorkers %d", peak, len(feats), before, pipeline.MaxWorkers())
	}
}
