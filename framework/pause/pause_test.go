package pause_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lazyvi/lazyvi/framework/pause"
)

// TestPoint: without a pause function Point is ctx.Err; with one it calls
// it and returns its error, else ctx's.
func TestPoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := pause.Point(ctx); err != nil {
		t.Fatalf("live ctx, no pause: %v", err)
	}
	calls := 0
	stop := errors.New("stop")
	var ret error
	pctx := pause.With(ctx, func(context.Context) error { calls++; return ret })
	if err := pause.Point(pctx); err != nil || calls != 1 {
		t.Fatalf("live ctx, pause nil: %v after %d calls, want nil after 1", err, calls)
	}
	ret = stop
	if err := pause.Point(pctx); !errors.Is(err, stop) || calls != 2 {
		t.Fatalf("pause failing: %v after %d calls, want stop after 2", err, calls)
	}
	ret = nil
	cancel()
	if err := pause.Point(pctx); !errors.Is(err, context.Canceled) || calls != 3 {
		t.Fatalf("ended ctx: %v after %d calls, want context.Canceled after 3", err, calls)
	}
	if err := pause.Point(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended ctx, no pause: %v", err)
	}
}
