package pipeline_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/progress"
	"github.com/lazyvi/lazyvi/pipeline"
)

// fakeClock is a clock that only the estimators move.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// costly is an estimator whose reductions take cost on the fake clock.
type costly struct {
	shift
	name  string
	cost  time.Duration
	clock *fakeClock
}

func (c costly) Name() string { return c.name }
func (c costly) Reduce(ctx context.Context, p *framework.Problem, f framework.Feature) (framework.Reduced, error) {
	c.clock.t = c.clock.t.Add(c.cost)
	return c.shift.Reduce(ctx, p, f)
}

// TestReduceETATwoCosts: a run of a cheap estimator's reductions (10 ms,
// as dropout's) and a costly one's (1 s, as retrain's), the cheap one
// named first, on one worker and a fake clock: the progress's ETA, from its
// first estimate on, stays within half and twice the time left (plus a
// second). Taken estimator by estimator, the cheap reductions' rate
// promised the end in 0.2 s with 20 s left.
func TestReduceETATwoCosts(t *testing.T) {
	p := meanProblem(t)
	var feats []framework.Feature
	for i := range 20 {
		feats = append(feats, framework.Feature{Name: string(rune('a' + i)), Columns: []int{i % 3}})
	}
	clock := &fakeClock{t: time.Unix(1000, 0)}
	ests := []framework.Estimator{
		costly{shift{0.5}, "cheap", 10 * time.Millisecond, clock},
		costly{shift{0.5}, "costly", time.Second, clock},
	}
	meter := progress.New(io.Discard, progress.Lines, "cheap/costly")
	defer meter.Close()
	meter.SetClock(clock.now)
	type sample struct {
		done int
		at   time.Time
		eta  time.Duration
	}
	var samples []sample
	progressed := func(done, total int) {
		meter.Update(done, total)
		if eta, ok := meter.ETA(); ok && done < total {
			samples = append(samples, sample{done, clock.t, eta})
		}
	}
	if _, err := pipeline.Reduce(context.Background(), []*framework.Problem{p}, ests, feats, pipeline.ReduceOptions{Workers: 1, Progress: progressed}); err != nil {
		t.Fatal(err)
	}
	end := clock.t
	if len(samples) < 30 {
		t.Fatalf("%d ETAs over 40 reductions, want one from the second on", len(samples))
	}
	for _, s := range samples {
		left := end.Sub(s.at)
		if s.eta < left/2 || s.eta > 2*left+time.Second {
			t.Errorf("after %d of 40 reductions the ETA is %v with %v left", s.done, s.eta, left)
		}
	}
}
