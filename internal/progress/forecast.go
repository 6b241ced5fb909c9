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
// run's wall time from what it has seen: the training so far (that of the
// first together repetitions, trained side by side) a together-th of it
// per repetition, the reductions at the rate they have gone, and --check's
// retraining (the last checkJobs reductions of each repetition) at a
// training of one of the repetition's models each. When that is at least
// forecastLong it says so on w, once, with --repeats 1's forecast and its
// cost in power where the run has several repetitions. It passes every
// update on to prog.
type Forecast struct {
	w        io.Writer
	prog     *Meter
	repeats  int
	together int       // the repetitions trained before the first reduction
	start    time.Time // the run's start, before the first training
	// checkJobs are the check's reductions in each repetition, models the
	// full models each repetition trains (its folds).
	checkJobs, models int

	mu      sync.Mutex
	trained time.Time // the first repetition's reductions started
	// mark is when markDone reductions were done, the first forecastShare
	// of the first repetition's, where together > 1.
	mark     time.Time
	markDone int
	said     bool
}

// NewForecast returns the forecast of a run of repeats repetitions, the
// first together of them trained side by side before the first reduction,
// each training models full models and ending with checkJobs reductions
// of --check, said on w; its updates go on to prog (nil: drawn nowhere).
func NewForecast(w io.Writer, prog *Meter, repeats, together, checkJobs, models int) *Forecast {
	repeats = max(repeats, 1)
	return &Forecast{w: w, prog: prog, repeats: repeats, together: min(max(together, 1), repeats), checkJobs: checkJobs, models: max(models, 1), start: time.Now()}
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
	need := min(perRep, max(forecastMinJobs, int(forecastShare*float64(perRep))))
	if done < need {
		return ""
	}
	// One repetition's training: what the first together took side by side,
	// shared out.
	training := f.trained.Sub(f.start) / time.Duration(max(f.together, 1))
	// The reductions' rate: from the first count; where several
	// repetitions trained side by side, the later ones may still train
	// beside the first reductions, so from the need-th on, over as many
	// again (the time until then counted as it went).
	from, counted, before := f.trained, 0, training*time.Duration(f.repeats)
	if f.together > 1 {
		if f.mark.IsZero() {
			f.mark, f.markDone = now, done
			return ""
		}
		if done < min(perRep*f.repeats, f.markDone+need) {
			return ""
		}
		from, counted = f.mark, f.markDone
		before = f.mark.Sub(f.start) + training*time.Duration(f.repeats-f.together)
	}
	f.said = true
	rate := float64(now.Sub(from)) / float64(done-counted)
	// A check's reduction trains a model as large as each full model.
	checking := training / time.Duration(f.models) * time.Duration(f.checkJobs*f.repeats)
	whole := before + time.Duration(rate*float64(perRep*f.repeats-counted)) + checking
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
