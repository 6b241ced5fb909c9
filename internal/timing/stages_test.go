package timing

import (
	"context"
	"sync"
	"testing"
)

// TestStages: steps are totalled over concurrent calls in the order they
// first started, flops added to a step count with it, and a context
// without Stages (or with a nil one) records nothing without failing.
func TestStages(t *testing.T) {
	var s Stages
	ctx := With(context.Background(), &s)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			From(ctx).Start("kernel")(100)
			From(ctx).Add("search", 0.5, 10)
		}()
	}
	wg.Wait()
	From(ctx).Add("kernel", 1, 0)
	got := s.Totals()
	if len(got) != 2 || got[0].Name != "kernel" || got[1].Name != "search" {
		t.Fatalf("steps %+v, want kernel then search", got)
	}
	if got[0].Flops != 400 || got[0].Seconds < 1 || got[1].Flops != 40 || got[1].Seconds != 2 {
		t.Errorf("totals %+v: want kernel 400 flops and at least 1 s, search 40 flops and 2 s", got)
	}
	From(context.Background()).Start("x")(1)
	From(With(context.Background(), nil)).Add("x", 1, 1)
	if (*Stages)(nil).Totals() != nil {
		t.Error("a nil Stages has totals")
	}
}
