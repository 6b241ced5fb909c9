package main

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

// progressMode is where and how a long run shows its progress on stderr
// (--progress).
type progressMode int

const (
	// progressAuto: a bar when stderr is a terminal, whatever stdout and
	// --format are; plain lines when stderr is a file or a pipe (a log,
	// a Slurm job's output); nothing when it is neither.
	progressAuto progressMode = iota
	// progressBar redraws one line in place (carriage returns).
	progressBar
	// progressLines writes a plain line every progressInterval.
	progressLines
	// progressOff shows nothing.
	progressOff
)

// progressUsage is the help of --progress.
const progressUsage = "show progress on stderr: `mode` auto (a bar on a terminal, a plain line every 30 s in a log, or what $LAZYVI_PROGRESS says), bar, lines or off"

// progressEnv names the environment variable that sets what auto means
// (auto, bar, lines or off), e.g. off for every job of a batch script.
const progressEnv = "LAZYVI_PROGRESS"

// parseProgress reads --progress.
func parseProgress(s string) (progressMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return progressAuto, nil
	case "bar":
		return progressBar, nil
	case "lines":
		return progressLines, nil
	case "off":
		return progressOff, nil
	}
	return 0, framework.Usagef("unknown --progress %q (want auto, bar, lines or off)", s)
}

// progressInterval is the time between two plain progress lines; tests
// shorten it.
var progressInterval = 30 * time.Second

// The ETA's smoothing: a new estimate moves the shown ETA by
// 1 - exp(-dt/tau) of the difference, dt the time since the last one, so
// that a burst of cheap work units (dropout's reductions take
// milliseconds, retrain's seconds) cannot swing it; tau is half the time
// counted so far, between etaTauMin and etaTauMax, so that the first
// estimates, made on little work, give way soon. No ETA is shown before
// a twentieth of the units are done.
const (
	etaTauMin = 2 * time.Second
	etaTauMax = 15 * time.Second
	etaWarmup = 20
)

// progress shows a long run's progress on stderr, as a bar redrawn in
// place on a terminal:
//
//	lazy/dropout/retrain 12/30 [=====>    ] 40% 1m02s eta 1m30s
//
// or, in a log, as a plain line every progressInterval:
//
//	vi: lazy/dropout/retrain 12/30 (40%), 1m02s elapsed, eta 1m30s
//
// Between counts it shows a status (starting the backend, training the
// full model). A nil *progress shows nothing, so callers need not check;
// close stops it.
type progress struct {
	w     io.Writer
	label string
	lines bool // plain lines, not a bar
	width int  // bar width in characters
	now   func() time.Time

	mu       sync.Mutex
	status   string // shown while no count is
	done     int    // the largest count shown
	total    int
	start    time.Time // of the run: elapsed
	estStart time.Time // of the counting: the rate
	last     time.Time // the last bar drawn
	lastLine time.Time // the last plain line written
	eta      time.Duration
	etaAt    time.Time // when eta was last set; zero: none yet
	shown    bool      // a bar is on the screen
	quiet    bool      // cleared: no line until the next count or status
	stop     chan struct{}
}

// newProgress returns the progress of a run labelled label, shown as mode
// says, or nil when it shows nothing.
func (a *app) newProgress(mode progressMode, label string) *progress {
	f, isFile := a.stderr.(*os.File)
	if mode == progressAuto {
		if m, err := parseProgress(os.Getenv(progressEnv)); err == nil {
			mode = m
		}
	}
	if mode == progressAuto {
		switch {
		case isFile && term.IsTerminal(int(f.Fd())):
			mode = progressBar
		case isFile:
			mode = progressLines
		default:
			mode = progressOff
		}
	}
	if mode == progressOff {
		return nil
	}
	p := &progress{w: a.stderr, label: label, lines: mode == progressLines, width: 30, now: time.Now}
	p.start = p.now()
	p.lastLine = p.start
	p.stop = make(chan struct{})
	tick := time.Second // the bar's clock and countdown move
	if p.lines {
		tick = progressInterval
	}
	go p.run(tick)
	return p
}

// run redraws the bar, or writes a line, every tick until close.
func (p *progress) run(tick time.Duration) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
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

// setStatus shows a message in place of the count (e.g. while the full
// model trains).
func (p *progress) setStatus(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status, p.quiet = msg, false
	p.total = 0
	if !p.lines {
		p.draw()
	}
}

// update is an EstimateOptions.Progress callback; it may be called
// concurrently. Bar redraws are limited to ten a second, except the last.
func (p *progress) update(done, total int) {
	if p == nil || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if done == 0 {
		// The counting starts: what came before is not in the rate.
		p.estStart, p.etaAt, p.done = now, time.Time{}, 0
	} else if done < p.done && total == p.total {
		return // workers report concurrently: an older count arrived late
	}
	p.done, p.total, p.status, p.quiet = done, total, "", false
	if p.estStart.IsZero() {
		p.estStart = now
	}
	p.setETA(now)
	if p.lines || (done > 0 && done < total && now.Sub(p.last) < 100*time.Millisecond) {
		return
	}
	p.draw()
}

// setETA folds the latest count into the ETA: the remaining units at the
// average rate since the counting began, blended into the shown ETA (which
// counts down between counts) by the time that passed (etaTauMin).
func (p *progress) setETA(now time.Time) {
	if p.done <= 0 || p.done*etaWarmup < p.total {
		return
	}
	raw := time.Duration(float64(now.Sub(p.estStart)) / float64(p.done) * float64(p.total-p.done))
	if p.etaAt.IsZero() {
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

// shownETA is the ETA as of now: the last one, counted down.
func (p *progress) shownETA(now time.Time) string {
	if p.etaAt.IsZero() {
		return "?"
	}
	return fmtDuration(max(p.eta-now.Sub(p.etaAt), 0))
}

// draw redraws the bar (the caller holds mu).
func (p *progress) draw() {
	now := p.now()
	p.last = now
	elapsed := fmtDuration(now.Sub(p.start))
	if p.total <= 0 {
		if p.status != "" {
			fmt.Fprintf(p.w, "\r\033[K%s %s", p.status, elapsed)
			p.shown = true
		}
		return
	}
	frac := float64(p.done) / float64(p.total)
	fill := min(int(frac*float64(p.width)), p.width)
	bar := strings.Repeat("=", fill)
	if fill < p.width {
		bar += ">" + strings.Repeat(" ", p.width-fill-1)
	}
	fmt.Fprintf(p.w, "\r\033[K%s %d/%d [%s] %3.0f%% %s eta %s", p.label, p.done, p.total, bar, 100*frac, elapsed, p.shownETA(now))
	p.shown = true
}

// writeLine writes a plain progress line (the caller holds mu).
func (p *progress) writeLine() {
	now := p.now()
	p.lastLine = now
	elapsed := fmtDuration(now.Sub(p.start))
	switch {
	case p.total > 0:
		fmt.Fprintf(p.w, "vi: %s %d/%d (%.0f%%), %s elapsed, eta %s\n", p.label, p.done, p.total,
			100*float64(p.done)/float64(p.total), elapsed, p.shownETA(now))
	case p.status != "":
		fmt.Fprintf(p.w, "vi: %s: %s, %s elapsed\n", p.label, p.status, elapsed)
	default:
		fmt.Fprintf(p.w, "vi: %s: %s elapsed\n", p.label, elapsed)
	}
}

// setLabel changes what the bar and the lines call the work (e.g. once
// the estimators that the backend cannot run are dropped).
func (p *progress) setLabel(label string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.label = label
}

// clear erases the bar, so that other output can follow; the next count
// or status draws it again.
func (p *progress) clear() {
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

// close erases the bar and stops the progress for good.
func (p *progress) close() {
	if p == nil {
		return
	}
	p.clear()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		p.stop = nil
	}
}

// fmtDuration writes d to the second: 45s, 3m07s, 1h02m03s.
func fmtDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}
