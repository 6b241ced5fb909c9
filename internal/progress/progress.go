// Package progress shows a long run's progress on a terminal or in a log:
// a bar redrawn in place, or a plain line every Interval.
package progress

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/lazyvi/lazyvi/framework"
)

// Mode is where and how a long run shows its progress on stderr
// (--progress).
type Mode int

const (
	// Auto: a bar when stderr is a terminal, whatever stdout and
	// --format are; plain lines when stderr is a file or a pipe (a log,
	// a Slurm job's output); nothing when it is neither.
	Auto Mode = iota
	// Bar redraws one line in place (carriage returns).
	Bar
	// Lines writes a plain line every Interval.
	Lines
	// Off shows nothing.
	Off
)

// Usage is the help of --progress.
const Usage = "show progress on stderr: `mode` auto (a bar on a terminal, a plain line every 30 s in a log, or what $LAZYVI_PROGRESS says), bar, lines or off"

// EnvVar names the environment variable that sets what auto means
// (auto, bar, lines or off), e.g. off for every job of a batch script.
const EnvVar = "LAZYVI_PROGRESS"

// ParseMode reads --progress.
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return Auto, nil
	case "bar":
		return Bar, nil
	case "lines":
		return Lines, nil
	case "off":
		return Off, nil
	}
	return 0, framework.Usagef("unknown --progress %q (want auto, bar, lines or off)", s)
}

// Interval is the time between two plain progress lines (tests shorten
// it).
var Interval = 30 * time.Second

// The ETA's smoothing: a new estimate (etaModel) moves the shown ETA by
// 1 - exp(-dt/tau) of the difference, dt the time since the last one, so
// that a burst of cheap work units (dropout's reductions take
// milliseconds, retrain's seconds) cannot swing it; tau is half the time
// counted so far, between etaTauMin and etaTauMax, so that the first
// estimates, made on little work, give way soon. An estimate made on new
// knowledge of the run's shape (its repetitions) replaces the shown one at
// once. No ETA is shown before a twentieth of the units are done; between
// estimates the ETA counts down, and a run late on it shows 1s, then "?"
// (shownETA): "eta 0s" shows only at the end.
const (
	etaTauMin = 2 * time.Second
	etaTauMax = 15 * time.Second
	etaWarmup = 20
	etaFloor  = 0.25
	etaLate   = 2 * time.Second
)

// DefaultUnit is what the counted units are called unless SetUnit says
// otherwise: the reductions of vi estimate, shapley and roar (one
// estimator's reduced model of one feature, or group, on one fold).
const DefaultUnit = "reductions"

// Meter shows a long run's progress on stderr, as a bar redrawn in
// place on a terminal:
//
//	lazy/dropout/retrain 12/30 reductions [=====>    ] 40% 1m02s eta 1m30s
//
// or, in a log, as a plain line every Interval:
//
//	vi: lazy/dropout/retrain 12/30 reductions (40%), 1m02s elapsed, eta 1m30s
//
// Between counts it shows a status (starting the backend, training the
// full model). A nil *progress shows nothing, so callers need not check;
// Close stops it.
type Meter struct {
	w     io.Writer
	label string
	unit  string // what the counts count; "": DefaultUnit
	lines bool   // plain lines, not a bar
	width int    // bar width in characters
	now   func() time.Time

	mu       sync.Mutex
	status   string    // shown while no count is
	statusAt time.Time // when the status was set: uncounted work began
	done     int       // the largest count shown
	total    int
	start    time.Time // of the run: elapsed
	estStart time.Time // of the counting
	model    etaModel
	last     time.Time // the last bar drawn
	lastLine time.Time // the last plain line written
	eta      time.Duration
	etaAt    time.Time // when eta was last set; zero: none yet
	shown    bool      // a bar is on the screen
	quiet    bool      // cleared: no line until the next count or status
	stop     chan struct{}
}

// New returns the progress of a run labelled label, shown on w as mode
// says, or nil when it shows nothing. Auto looks at $LAZYVI_PROGRESS, then
// at w: a bar on a terminal, lines on a file, nothing on anything else.
func New(w io.Writer, mode Mode, label string) *Meter {
	f, isFile := w.(*os.File)
	if mode == Auto {
		if m, err := ParseMode(os.Getenv(EnvVar)); err == nil {
			mode = m
		}
	}
	if mode == Auto {
		switch {
		case isFile && term.IsTerminal(int(f.Fd())):
			mode = Bar
		case isFile:
			mode = Lines
		default:
			mode = Off
		}
	}
	if mode == Off {
		return nil
	}
	p := &Meter{w: w, label: label, lines: mode == Lines, width: 30, now: time.Now}
	p.start = p.now()
	p.lastLine = p.start
	p.stop = make(chan struct{})
	tick := time.Second // the bar's clock and countdown move
	if p.lines {
		tick = Interval
	}
	go p.run(tick, p.stop)
	return p
}

// run redraws the bar, or writes a line, every tick until stop closes
// (Close, which then clears p.stop: run holds its own copy).
func (p *Meter) run(tick time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			p.mu.Lock()
			if p.lines && !p.quiet {
				p.writeLine()
			} else if p.shown {
				p.draw()
			}
			p.mu.Unlock()
		}
	}
}

// SetStatus shows a message in place of the count (e.g. while the full
// model trains).
func (p *Meter) SetStatus(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status, p.quiet = msg, false
	p.statusAt = p.now()
	p.total = 0
	if !p.lines {
		p.draw()
	}
}

// Update is an EstimateOptions.Progress callback; it may be called
// concurrently. Bar redraws are limited to ten a second, except the last.
func (p *Meter) Update(done, total int) {
	if p == nil || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if done < p.done && total == p.total && done > 0 {
		return // workers report concurrently: an older count arrived late
	}
	shape := false
	switch {
	case done == 0 || p.estStart.IsZero():
		// The counting starts: what came before it since the last
		// status is the uncounted work before each repetition.
		p.estStart, p.etaAt = now, time.Time{}
		p.model.begin(total, now, now.Sub(p.uncountedSince()))
	case total != p.model.total:
		p.model.retotal(total) // a forecast total (vi shapley's) moved
		shape = true
	}
	// A count sent again begins a repetition; with a new total it is only
	// the total's news.
	if done > 0 && !(shape && done == p.model.done) {
		shape = p.model.count(done, now) || shape
	}
	p.done, p.total, p.status, p.quiet = done, total, "", false
	p.setETA(now, shape)
	if p.lines || (done > 0 && done < total && now.Sub(p.last) < 100*time.Millisecond) {
		return
	}
	p.draw()
}

// uncountedSince is when the uncounted work before the counting began:
// the last status, or the run's start.
func (p *Meter) uncountedSince() time.Time {
	if p.statusAt.After(p.start) {
		return p.statusAt
	}
	return p.start
}

// setETA folds the model's latest estimate into the ETA, blended into the
// shown ETA (which counts down between counts) by the time that passed
// (etaTauMin), or in its place when shape says the model learnt the run's
// shape or the estimate comes from a repetition's profile.
func (p *Meter) setETA(now time.Time, shape bool) {
	raw, ok, profiled := p.model.remaining()
	if !ok {
		return
	}
	if p.etaAt.IsZero() || shape || profiled {
		p.eta, p.etaAt = raw, now
		return
	}
	dt := now.Sub(p.etaAt)
	countdown := max(p.eta-dt, 0)
	tau := min(max(now.Sub(p.estStart)/2, etaTauMin), etaTauMax)
	alpha := 1 - math.Exp(-float64(dt)/float64(tau))
	if p.done >= p.total {
		alpha = 1
	}
	p.eta = countdown + time.Duration(alpha*float64(raw-countdown))
	p.etaAt = now
}

// shownETA is the ETA as of now: the last one, counted down, in whole
// seconds rounded up, so that 0s shows only at the end. A run late on
// its ETA shows 1s for etaLate (or etaFloor of the ETA, if longer), then
// "?": how late it will be is not known.
func (p *Meter) shownETA(now time.Time) string {
	if p.etaAt.IsZero() || (p.eta <= 0 && p.done < p.total) {
		return "?"
	}
	left := p.eta - now.Sub(p.etaAt)
	if p.done < p.total && left <= 0 {
		if -left > max(etaLate, time.Duration(etaFloor*float64(p.eta))) {
			return "?"
		}
		left = time.Second
	}
	left = max(left, 0)
	if r := left % time.Second; r > 0 {
		left += time.Second - r
	}
	return formatDuration(left)
}

// units names the counted units.
func (p *Meter) units() string {
	if p.unit == "" {
		return DefaultUnit
	}
	return p.unit
}

// draw redraws the bar (the caller holds mu).
func (p *Meter) draw() {
	now := p.now()
	p.last = now
	elapsed := formatDuration(now.Sub(p.start))
	if p.total <= 0 {
		if p.status != "" {
			fmt.Fprintf(p.w, "\r\033[K%s %s", p.status, elapsed)
			p.shown = true
		}
		return
	}
	if p.done >= p.total {
		// The counted work is done; what follows (a run's baselines and
		// inference) is not counted: no "100% eta 0s" while it runs.
		fmt.Fprintf(p.w, "\r\033[K%s %d/%d %s done, finishing %s", p.label, p.done, p.total, p.units(), elapsed)
		p.shown = true
		return
	}
	frac := float64(p.done) / float64(p.total)
	fill := min(int(frac*float64(p.width)), p.width)
	bar := strings.Repeat("=", fill)
	if fill < p.width {
		bar += ">" + strings.Repeat(" ", p.width-fill-1)
	}
	fmt.Fprintf(p.w, "\r\033[K%s %d/%d %s [%s] %3.0f%% %s eta %s", p.label, p.done, p.total, p.units(), bar, 100*frac, elapsed, p.shownETA(now))
	p.shown = true
}

// writeLine writes a plain progress line (the caller holds mu).
func (p *Meter) writeLine() {
	now := p.now()
	p.lastLine = now
	elapsed := formatDuration(now.Sub(p.start))
	switch {
	case p.total > 0 && p.done >= p.total:
		fmt.Fprintf(p.w, "vi: %s %d/%d %s done, finishing, %s elapsed\n", p.label, p.done, p.total, p.units(), elapsed)
	case p.total > 0:
		fmt.Fprintf(p.w, "vi: %s %d/%d %s (%.0f%%), %s elapsed, eta %s\n", p.label, p.done, p.total, p.units(),
			100*float64(p.done)/float64(p.total), elapsed, p.shownETA(now))
	case p.status != "":
		fmt.Fprintf(p.w, "vi: %s: %s, %s elapsed\n", p.label, p.status, elapsed)
	default:
		fmt.Fprintf(p.w, "vi: %s: %s elapsed\n", p.label, elapsed)
	}
}

// SetLabel changes what the bar and the lines call the work (e.g. once
// the estimators that the backend cannot run are dropped).
func (p *Meter) SetLabel(label string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.label = label
}

// SetUnit names what the counts count ("reduced models", "data sets"),
// shown after the count: "12/30 reduced models". Empty: DefaultUnit.
func (p *Meter) SetUnit(unit string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unit = unit
}

// SetClock makes now the Meter's clock, the run's start included, so that
// a test drives its ETA with a fake clock.
func (p *Meter) SetClock(now func() time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.now = now
	p.start = now()
	p.lastLine = p.start
}

// ETA returns the time left that the Meter shows now (before its rounding
// to the second), and false while it shows none.
func (p *Meter) ETA() (time.Duration, bool) {
	if p == nil {
		return 0, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.etaAt.IsZero() {
		return 0, false
	}
	return max(p.eta-p.now().Sub(p.etaAt), 0), true
}

// SetRepetitions says that the counted total comes in n repetitions of
// equal size, each preceded by uncounted work (training its full models)
// as long as the work between the last status and the first count, so
// that the ETA allows for it from the start; without it the ETA learns
// of the repetitions when the first ends.
func (p *Meter) SetRepetitions(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.model.reps = n
	if n > 1 && p.model.total > 0 && p.model.total%n == 0 && p.model.per == 0 {
		p.model.per = p.model.total / n
	}
}

// SetTogether says that the first n repetitions (SetRepetitions) are
// trained side by side before the first count, so that the work before it
// is theirs: they begin without a pause, and each later one pauses for an
// n-th of it (1, the default: every repetition pauses as long).
func (p *Meter) SetTogether(n int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.model.together = max(n, 1)
}

// Clear erases the bar, so that other output can follow; the next count
// or status draws it again.
func (p *Meter) Clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quiet = true
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// Close erases the bar and stops the progress for good.
func (p *Meter) Close() {
	if p == nil {
		return
	}
	p.Clear()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
}

// formatDuration writes d to the second: 45s, 3m07s, 1h02m03s.
func formatDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}
