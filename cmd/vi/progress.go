package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress draws a one-line progress bar on a terminal:
//
//	lazy/retrain/dropout 12/30 [=====>    ] 40% eta 3s
//
// A nil *progress draws nothing, so callers need not check.
type progress struct {
	w     io.Writer
	label string
	width int // bar width in characters

	mu    sync.Mutex
	done  int // the largest count drawn
	start time.Time
	last  time.Time
	shown bool
}

// newProgress returns a progress bar on stderr when enabled is true and both
// stdout and stderr are terminals (a user watching, not a pipe, a file or a
// CI log), else nil.
func (a *app) newProgress(enabled bool, label string) *progress {
	f, ok := a.stderr.(*os.File)
	out, okOut := a.stdout.(*os.File)
	if !enabled || !ok || !okOut || !term.IsTerminal(int(f.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return nil
	}
	return &progress{w: f, label: label, width: 30, start: time.Now()}
}

// status shows a message in place of the bar (e.g. while the full model
// trains).
func (p *progress) status(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[K%s", msg)
	p.shown = true
}

// update is an EstimateOptions.Progress callback; it may be called
// concurrently. Redraws are limited to ten a second, except the last.
func (p *progress) update(done, total int) {
	if p == nil || total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if done == 0 {
		p.start = now // the estimation starts: what came before is not in the ETA
	} else if done < p.done {
		return // workers report concurrently: an older count arrived late
	}
	p.done = done
	if done > 0 && done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	frac := float64(done) / float64(total)
	fill := int(frac * float64(p.width))
	bar := strings.Repeat("=", fill)
	if fill < p.width {
		bar += ">" + strings.Repeat(" ", p.width-fill-1)
	}
	eta := "?"
	if done > 0 {
		elapsed := now.Sub(p.start)
		rem := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		eta = rem.Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r\033[K%s %d/%d [%s] %3.0f%% eta %s", p.label, done, total, bar, 100*frac, eta)
	p.shown = true
}

// clear erases the bar.
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
