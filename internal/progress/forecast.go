package progress

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// forecastLong is the forecast run time from which a Forecast says how
// long the run will take and what the cheaper option costs.
const forecastLong = 2 * time.Minute

// forecastShare is the share of the first repetition's reductions after
// which the forecast is made (at least forecastMinJobs of them, or all).
const (
	forecastShare   = 0.05
	forecastMinJobs = 4
)

// A Forecast watches a run's progress and, once the first repetition's full
// models are trained and a few of its reductions are done, forecasts the
// run's wall time from what it has seen: the training so far once per
// repetition, the reductions at the rate they have gone, and --check's
// retraining (the last checkJobs reductions of each repetition) at a
// training of one of the repetition's models each. When that is at least
// forecastLong it says so on w, once, with --repeats 1's forecast and its
// cost in power where the run has several repetitions. It passes every
// update on to prog.
type Forecast struct {
	w       io.Writer
	prog    *Meter
	repeats int
	start   time.Time // the run's start, before the first training
	// checkJobs are the check's reductions in each repetition, models the
	// full models each repetition trains (its folds).
	checkJobs, models int

	mu      sync.Mutex
	trained time.Time // the first repetition's reductions started
	said    bool
}

// NewForecast returns the forecast of a run of repeats repetitions, each
// training models full models and ending with checkJobs reductions of
// --check, said on w; its updates go on to prog (nil: drawn nowhere).
func NewForecast(w io.Writer, prog *Meter, repeats, checkJobs, models int) *Forecast {
	return &Forecast{w: w, prog: prog, repeats: max(repeats, 1), checkJobs: checkJobs, models: max(models, 1), start: time.Now()}
}

// Update is a pipeline.EstimateOptions.Progress callback, counting over
// all repetitions (done of total).
func (f *Forecast) Update(done, total int) {
	f.prog.Update(done, total)
	if msg := f.observe(done, total, time.Now()); msg != "" {
		f.prog.Clear()
		fmt.Fprint(f.w, msg)
	}
}

// observe records the progress (done of total reductions at now) and
// returns the forecast's message when it is due and the run is long.
func (f *Forecast) observe(done, total int, now time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.said || total <= 0 {
		return ""
	}
	if f.trained.IsZero() {
		if done == 0 {
			f.trained = now
		}
		return ""
	}
	perRep := total/f.repeats - f.checkJobs
	if perRep <= 0 {
		return "" // not a run of this forecast's shape
	}
	if done < min(perRep, max(forecastMinJobs, int(forecastShare*float64(perRep)))) {
		return ""
	}
	f.said = true
	training := f.trained.Sub(f.start)
	reducing := now.Sub(f.trained)
	// A check's reduction trains a model as large as each full model.
	checking := training / time.Duration(f.models) * time.Duration(f.checkJobs*f.repeats)
	whole := training*time.Duration(f.repeats) + time.Duration(float64(reducing)*float64(perRep*f.repeats)/float64(done)) + checking
	if whole < forecastLong {
		return ""
	}
	parts := roundForecast(training*time.Duration(f.repeats)) + " training the full models, "
	if checking > 0 {
		parts += roundForecast(checking) + " retraining for --check, "
	}
	msg := fmt.Sprintf("vi: forecast: this run takes about %s (%sthe rest the reductions)\n", roundForecast(whole), parts)
	if f.repeats > 1 {
		msg += fmt.Sprintf("vi: --repeats 1 would take about %s, with much less power: in docs/inference.md's study it found the planted signal in 9%% / 20%% of the data sets where the default (--repeats 3) found it in 97%% / 100%%\n",
			roundForecast(whole/time.Duration(f.repeats)))
	}
	return msg
}

// roundForecast writes a forecast as what it can promise: minutes from
// ten minutes ("1 h 13 min", "27 min"), else to ten seconds ("3 min 40
// s", "50 s").
func roundForecast(d time.Duration) string {
	if d >= 10*time.Minute {
		m := int(d.Round(time.Minute) / time.Minute)
		if m >= 60 {
			return fmt.Sprintf("%d h %d min", m/60, m%60)
		}
		return fmt.Sprintf("%d min", m)
	}
	s := int(d.Round(10*time.Second) / time.Second)
	switch {
	case s >= 60 && s%60 == 0:
		return fmt.Sprintf("%d min", s/60)
	case s >= 60:
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	return fmt.Sprintf("%d s", s)
}
