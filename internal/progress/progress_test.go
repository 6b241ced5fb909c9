package progress

import (
	"bytes"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a progress's clock that the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newTestProgress(w *bytes.Buffer, c *fakeClock, lines bool) *Meter {
	return &Meter{w: w, label: "lazy/dropout", width: 10, lines: lines, now: c.now, start: c.t}
}

func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newTestProgress(&b, c, false)
	p.SetStatus("training the full model")
	c.add(5 * time.Second)
	p.Update(0, 10)
	c.add(4 * time.Second)
	p.Update(4, 10)
	p.Update(5, 10) // within 100ms of the last draw: skipped
	c.add(6 * time.Second)
	p.Update(10, 10)
	p.Clear()
	out := b.String()
	for _, w := range []string{"\r\033[Ktraining the full model 0s", "lazy/dropout 4/10 [====>     ]  40% 9s eta 6s", "lazy/dropout 10/10 done, finishing 15s", "\r\033[K"} {
		if !strings.Contains(out, w) {
			t.Errorf("progress output lacks %q: %q", w, out)
		}
	}
	if strings.Contains(out, "5/10") {
		t.Errorf("progress redrew within 100ms: %q", out)
	}
	// The count done, the run goes on (its baselines, its inference):
	// never "100% ... eta 0s" while it does.
	if strings.Contains(out, "100%") || strings.Contains(out, "eta 0s") {
		t.Errorf("the finished count shows as 100%% with an ETA: %q", out)
	}
	var nilp *Meter
	nilp.Update(1, 2) // must not panic
	nilp.SetStatus("x")
	nilp.Clear()
	nilp.Close()
}

// TestProgressETARepeats: vi estimate's default run in miniature, three
// repetitions each of 27 lazy units (0.35 s), 24 dropout ones (10 ms) and
// 24 retrain ones (0.3 s), the next repetition's full model training for
// 3 s between them: no ETA before a twentieth of the units are done, then
// from 3 s on an ETA within half of (the truth + 5 s).
func TestProgressETARepeats(t *testing.T) {
	var b bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newTestProgress(&b, c, true)
	var costs []time.Duration // negative: a pause before the next unit
	for r := range 3 {
		if r > 0 {
			costs = append(costs, -3*time.Second)
		}
		for _, u := range []struct {
			n    int
			cost time.Duration
		}{{27, 350 * time.Millisecond}, {24, 10 * time.Millisecond}, {24, 300 * time.Millisecond}} {
			for range u.n {
				costs = append(costs, u.cost)
			}
		}
	}
	total := 225
	p.Update(0, total)
	start, done := c.t, 0
	for i, cost := range costs {
		if cost < 0 {
			c.add(-cost)
			continue
		}
		c.add(cost)
		done++
		p.Update(done, total)
		if done*20 < total {
			if got := p.shownETA(c.t); got != "?" {
				t.Fatalf("ETA after %d of %d units: %s, want ?", done, total, got)
			}
			continue
		}
		var rest time.Duration
		for _, later := range costs[i+1:] {
			rest += max(later, -later)
		}
		if c.t.Sub(start) > 3*time.Second && math.Abs(float64(p.eta-rest)) > 0.5*float64(rest+5*time.Second) {
			t.Errorf("after %d units (%v): ETA %v, the truth %v", done, c.t.Sub(start), p.eta, rest)
		}
	}
}

// TestProgressETA: a run whose units differ in cost as vi estimate's do
// (10 lazy reductions of 2 s, 10 dropout ones of 10 ms, 10 retrain ones
// of 3 s). The average rate alone drops the ETA from 40 s to 10 s in the
// tenth of a second that dropout's units take, then climbs again; the
// shown ETA must not move by more than a second (beyond its countdown)
// over that burst, and must end at 0.
func TestProgressETA(t *testing.T) {
	var b bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newTestProgress(&b, c, true)
	p.Update(0, 30)
	costs := make([]time.Duration, 0, 30)
	for range 10 {
		costs = append(costs, 2*time.Second)
	}
	for range 10 {
		costs = append(costs, 10*time.Millisecond)
	}
	for range 10 {
		costs = append(costs, 3*time.Second)
	}
	var before time.Duration
	for i, cost := range costs {
		c.add(cost)
		p.Update(i+1, 30)
		if i == 9 {
			before = p.eta
		}
		if i == 19 {
			// The burst took 0.1 s: the countdown alone moves the ETA by that.
			if moved := math.Abs(float64(p.eta - (before - 100*time.Millisecond))); moved > float64(time.Second) {
				t.Errorf("the ETA moved by %v over dropout's burst (from %v to %v), want at most 1s", time.Duration(moved), before, p.eta)
			}
			raw := time.Duration(float64(c.t.Sub(p.estStart)) / 20 * 10)
			if raw > 11*time.Second {
				t.Fatalf("the test's premise: the average rate's ETA after the burst is %v, want about 10s", raw)
			}
		}
	}
	if p.eta != 0 {
		t.Errorf("ETA at the end: %v, want 0", p.eta)
	}
}

// syncBuffer is a bytes.Buffer safe for the progress's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// shortInterval makes plain progress lines come every d for the test.
func shortInterval(t *testing.T, d time.Duration) {
	old := Interval
	Interval = d
	t.Cleanup(func() { Interval = old })
}

func TestProgressLines(t *testing.T) {
	t.Setenv(EnvVar, "")
	shortInterval(t, 20*time.Millisecond)
	var b syncBuffer
	p := New(&b, Lines, "lazy")
	p.SetStatus("training the full model")
	waitFor(t, &b, "vi: lazy: training the full model, 0s elapsed\n")
	p.Update(0, 10)
	p.Update(3, 10)
	waitFor(t, &b, "vi: lazy 3/10 (30%), 0s elapsed, eta 0s\n")
	p.Update(10, 10)
	waitFor(t, &b, "vi: lazy 10/10 done, finishing, 0s elapsed\n")
	p.Clear()
	p.Close()
	if out := b.String(); strings.Contains(out, "\r") || strings.Contains(out, "\033") {
		t.Errorf("plain lines hold a carriage return or an escape: %q", out)
	}
	// Modes: off and a writer that is not a file (auto) show nothing.
	if New(&b, Off, "x") != nil || New(&b, Auto, "x") != nil {
		t.Error("off, or auto on a writer that is not a file: want no progress")
	}
	for s, want := range map[string]Mode{"auto": Auto, "bar": Bar, "LINES": Lines, "off": Off} {
		if got, err := ParseMode(s); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseMode("verbose"); err == nil {
		t.Error("ParseMode(verbose): want an error")
	}
	// $LAZYVI_PROGRESS says what auto means.
	t.Setenv(EnvVar, "lines")
	if p := New(&b, Auto, "x"); p == nil || !p.lines {
		t.Errorf("auto with %s=lines: want plain lines, got %+v", EnvVar, p)
	} else {
		p.Close()
	}
}

func waitFor(t *testing.T, b interface{ String() string }, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", want, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
