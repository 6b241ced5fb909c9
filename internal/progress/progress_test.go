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
	for _, w := range []string{"\r\033[Ktraining the full model 0s", "lazy/dropout 4/10 reductions [====>     ]  40% 9s eta 6s", "lazy/dropout 10/10 reductions done, finishing 15s", "\r\033[K"} {
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
	waitFor(t, &b, "vi: lazy 3/10 reductions (30%), 0s elapsed, eta ")
	p.Update(10, 10)
	waitFor(t, &b, "vi: lazy 10/10 reductions done, finishing, 0s elapsed\n")
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

// step is one event of a simulated run: a unit that costs cost, or (pause)
// uncounted work, after which the pipeline sends the last count again, as
// it does when a repetition's reductions begin.
type step struct {
	cost  time.Duration
	pause bool
}

// defaultRun is vi estimate's default run in miniature: training before
// each of three repetitions (train), then in each 25 units of each cost
// in turn (lazy's, dropout's, retrain's reductions), the first
// repetition's units slow times as long (a machine busy at first).
func defaultRun(train time.Duration, slow float64, costs ...time.Duration) []step {
	var steps []step
	for r := range 3 {
		if r > 0 {
			steps = append(steps, step{cost: train, pause: true})
		}
		for _, c := range costs {
			if r == 0 {
				c = time.Duration(slow * float64(c))
			}
			for range 25 {
				steps = append(steps, step{cost: c})
			}
		}
	}
	return steps
}

// etaSample is the shown ETA at one moment and the time truly left.
type etaSample struct {
	at, shown, truth time.Duration
	done             int
	first            bool // in the first repetition
}

// simulate runs steps on a Meter with a fake clock, the status set train
// before the first count (the first repetition's training, or the first
// together repetitions' where together > 0), and samples the shown ETA
// every 100 ms of the run.
func simulate(t *testing.T, steps []step, train time.Duration, reps, together int) []etaSample {
	t.Helper()
	var b bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newTestProgress(&b, c, true)
	p.SetRepetitions(reps)
	if together > 0 {
		p.SetTogether(together)
	}
	p.SetStatus("training the full model")
	c.add(train)
	total := 0
	var end time.Duration
	for _, s := range steps {
		end += s.cost
		if !s.pause {
			total++
		}
	}
	p.Update(0, total)
	start := c.t
	var out []etaSample
	done, phases := 0, 1
	for _, s := range steps {
		for left := s.cost; left > 0; {
			d := min(left, 100*time.Millisecond)
			c.add(d)
			left -= d
			if left > 0 || !s.pause {
				if got := p.shownETA(c.t); got != "?" && done < total {
					shown, err := time.ParseDuration(got)
					if err != nil {
						t.Fatalf("ETA %q: %v", got, err)
					}
					out = append(out, etaSample{c.t.Sub(start), shown, end - c.t.Sub(start), done, phases == 1})
				}
			}
		}
		if s.pause {
			phases++
			p.Update(done, total)
			continue
		}
		done++
		p.Update(done, total)
	}
	if got := p.shownETA(c.t); got != "0s" {
		t.Errorf("ETA at the end: %s, want 0s", got)
	}
	return out
}

// TestETADefaultRun: the ETA of vi estimate's default run, its units of
// three costs (lazy 0.35 s, dropout 10 ms, retrain 0.3 s) in three
// repetitions with training between them, sampled every 100 ms of a fake
// clock: never 0s before the end; from the first estimate on, between 0.8
// and 2 times the time left (plus 2 s) in the first repetition, and once
// it is done, within 0.8 and 1.35 times (plus 1 s). With the repetitions
// said (SetRepetitions) and without (learnt when the first ends), with
// training short and long; and a run whose training is most of its time
// (lazy 50 ms, dropout 5 ms, training 20 s) with the repetitions said;
// and one whose first repetition runs at half the later ones' speed
// (checked from the second's tenth unit on).
func TestETADefaultRun(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		train time.Duration
		reps  int
		slow  float64
		costs []time.Duration
	}{
		{time.Second, 3, 1, []time.Duration{350 * ms, 10 * ms, 300 * ms}},
		{time.Second, 0, 1, []time.Duration{350 * ms, 10 * ms, 300 * ms}},
		{10 * time.Second, 3, 1, []time.Duration{350 * ms, 10 * ms, 300 * ms}},
		{20 * time.Second, 3, 1, []time.Duration{50 * ms, 5 * ms}},
		{time.Second, 3, 2, []time.Duration{350 * ms, 10 * ms, 300 * ms}},
	} {
		samples := simulate(t, defaultRun(tc.train, tc.slow, tc.costs...), tc.train, tc.reps, 0)
		if len(samples) < 100 {
			t.Fatalf("train %v, reps %d: %d samples", tc.train, tc.reps, len(samples))
		}
		bad := 0
		for _, s := range samples {
			low, high := s.truth*4/5, 2*s.truth+2*time.Second
			switch {
			case tc.slow != 1 && (s.first || s.done < 85):
				// It cannot know the speed will change, nor how fast the
				// second repetition goes before a few of its units are
				// done; the third starts at the second's pace.
				low, high = time.Second, 4*s.truth
			case !s.first:
				low, high = s.truth*4/5-time.Second, s.truth*27/20+time.Second
			}
			if s.shown == 0 || s.shown < low || s.shown > high {
				if bad++; bad <= 5 {
					t.Errorf("train %v, reps %d: at %v (%d units done) the ETA shows %v with %v left", tc.train, tc.reps, s.at, s.done, s.shown, s.truth)
				}
			}
		}
	}
}

// TestETATogether: where the three repetitions train side by side before
// the first count (30 s) and then follow one another without a pause
// (10 ms), the ETA said so (SetTogether) is within TestETADefaultRun's
// bounds from its first estimate on; one that assumes a pause as long as
// the first training before each later repetition shows about a minute
// too much in the first repetition.
func TestETATogether(t *testing.T) {
	ms := time.Millisecond
	steps := defaultRun(10*ms, 1, 350*ms, 10*ms, 300*ms)
	for _, together := range []int{3, 1} {
		bad := 0
		for _, s := range simulate(t, steps, 30*time.Second, 3, together) {
			low, high := s.truth*4/5, 2*s.truth+2*time.Second
			if !s.first {
				low, high = s.truth*4/5-time.Second, s.truth*27/20+time.Second
			}
			if s.shown == 0 || s.shown < low || s.shown > high {
				if bad++; together == 3 && bad <= 5 {
					t.Errorf("together 3: at %v (%d units done) the ETA shows %v with %v left", s.at, s.done, s.shown, s.truth)
				}
			}
		}
		if together == 1 && bad == 0 {
			t.Error("together 1: the ETA is within the bounds though it assumes a pause of 30 s before each later repetition")
		}
	}
}

// TestETALate: a run late on its ETA (its last unit stalls for 30 s after
// nine of a second each) shows 1s, then "?", never 0s, until it ends.
func TestETALate(t *testing.T) {
	var b bytes.Buffer
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newTestProgress(&b, c, false)
	p.Update(0, 10)
	for i := 1; i <= 9; i++ {
		c.add(time.Second)
		p.Update(i, 10)
	}
	var seen []string
	for range 300 {
		c.add(100 * time.Millisecond)
		got := p.shownETA(c.t)
		if got == "0s" {
			t.Fatalf("ETA 0s %v into the stalled unit", c.t.Sub(time.Unix(1009, 0)))
		}
		if len(seen) == 0 || seen[len(seen)-1] != got {
			seen = append(seen, got)
		}
	}
	if got, want := strings.Join(seen, " "), "1s ?"; got != want {
		t.Errorf("ETAs shown over the stall: %s, want %s", got, want)
	}
	c.add(time.Second)
	p.Update(10, 10)
	if got := p.shownETA(c.t); got != "0s" {
		t.Errorf("ETA at the end: %s", got)
	}
}

// secondsMeter returns a Meter with a fake clock that has counted n of
// total units at a second each.
func secondsMeter(n, total int) (*Meter, *fakeClock) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	p := newTestProgress(&bytes.Buffer{}, c, true)
	p.Update(0, total)
	for i := 1; i <= n; i++ {
		c.add(time.Second)
		p.Update(i, total)
	}
	return p, c
}

// A total that moves as the counting goes (vi shapley's forecast) keeps
// the rate learnt so far: the ETA follows the new total at once.
func TestETAMovingTotal(t *testing.T) {
	p, c := secondsMeter(20, 100)
	c.add(time.Second)
	p.Update(21, 60)
	if got := p.shownETA(c.t); got != "39s" {
		t.Errorf("ETA after the total fell to 60 with 21 done at 1 s each: %s, want 39s", got)
	}
}

// The same count with a new total is no repetition's start.
func TestETAMovedTotalNoRepetition(t *testing.T) {
	p, _ := secondsMeter(20, 100)
	p.Update(20, 60)
	if p.model.phases != 1 || len(p.model.pauses) != 0 {
		t.Errorf("a moved total counted as a repetition: %d begun, pauses %v", p.model.phases, p.model.pauses)
	}
}
