package progress

import "time"

// etaModel estimates the time a counted run has left from what it has
// seen. A run's units do not cost the same, and not all its work is
// counted:
//
//   - the counted total may come in repetitions (vi estimate's default
//     runs three), each preceded by uncounted work (training the
//     repetition's full models): a repetition starts with the count the
//     last one ended on, sent again, and SetRepetitions says how many
//     there are before the first ends. The work before the first count is
//     that of the first together repetitions (SetTogether: trained side
//     by side), which then begin without a pause; each later one costs a
//     together-th of it;
//   - within a repetition the units' costs differ by estimator (dropout's
//     reductions take milliseconds, retrain's seconds), in the same order
//     in every repetition: once one repetition is done, the rest of the
//     current one is estimated from the time the first took from the same
//     position on, and every later one as long as the first, both scaled
//     by how fast the current repetition has gone against the first up to
//     the same position, leaning at its start on how fast the last whole
//     one went (the first pays one-off costs, and speed can drift);
//   - before that, the units left cost the average so far.
type etaModel struct {
	total    int
	reps     int // the repetitions said (SetRepetitions); 0: inferred
	together int // the repetitions trained before the first count (SetTogether); 0: 1
	done     int

	per    int             // units per repetition; 0: not known yet
	phases int             // repetitions begun
	pre    time.Duration   // the uncounted work before the first count
	pauses []time.Duration // the uncounted work between repetitions
	busy   time.Duration   // time spent counting, pauses excluded
	since  time.Duration   // busy when the current repetition began
	// pace is the last whole repetition's time over the first's (1 until
	// a second one ends).
	pace float64
	last time.Time // the last count
	// cum[d] is the counting time at count d of the first repetition (only
	// for totals up to maxProfile).
	cum []time.Duration
}

// maxProfile is the largest total whose first repetition's count times
// are kept.
const maxProfile = 1 << 20

// begin starts the counting of total units at now, after pre of uncounted
// work.
func (m *etaModel) begin(total int, now time.Time, pre time.Duration) {
	*m = etaModel{total: total, reps: m.reps, together: m.together, phases: 1, pre: pre, last: now, pace: 1}
	if total <= maxProfile {
		m.cum = make([]time.Duration, 1, min(total, 1024)+1)
	}
	if m.reps > 1 && total%m.reps == 0 {
		m.per = total / m.reps
	}
}

// retotal makes total the units to count, the counting so far kept; the
// repetitions' size is known again only where SetRepetitions divides it.
func (m *etaModel) retotal(total int) {
	m.total, m.per = total, 0
	if m.reps > 1 && total%m.reps == 0 {
		m.per = total / m.reps
	}
}

// count folds a count (done of the total) at now in; a repeated count
// begins a repetition. It reports whether what the model knows of the
// run's shape changed (a repetition's size or profile became known).
func (m *etaModel) count(done int, now time.Time) (shape bool) {
	if done == m.done && done > 0 {
		// The next repetition begins: the time since the last count
		// was its uncounted work.
		m.pauses = append(m.pauses, now.Sub(m.last))
		if m.phases > 1 && len(m.cum) > m.per && m.cum[m.per] > 0 {
			m.pace = float64(m.busy-m.since) / float64(m.cum[m.per])
		}
		m.last, m.since = now, m.busy
		if m.per == 0 && m.total%done == 0 {
			m.per = done
			shape = true
		}
		m.phases++
		return shape || m.phases == 2
	}
	m.busy += now.Sub(m.last)
	m.last, m.done = now, done
	if m.per > 0 && done > m.phases*m.per {
		m.phases = (done-1)/m.per + 1 // a repetition began unannounced
	}
	if m.cum != nil && m.phases == 1 {
		for len(m.cum) <= done {
			m.cum = append(m.cum, m.busy)
		}
	}
	return false
}

// remaining returns the time the run has left as of the last count, and
// false while too little is known: fewer than a twentieth of the units
// counted in the first repetition, or no time spent counting. profiled
// says that it comes from the first repetition's profile, which a burst
// of cheap units does not swing.
func (m *etaModel) remaining() (left time.Duration, ok, profiled bool) {
	if m.done <= 0 || m.busy <= 0 || (m.phases == 1 && m.done*etaWarmup < m.total) {
		return 0, false, false
	}
	reps := 1
	if m.per > 0 {
		reps = m.total / m.per
	}
	later := max(reps-m.phases, 0) // repetitions not begun
	// Those of the first together not begun were trained before the first
	// count: only the others pause.
	paused := max(reps-max(m.phases, m.together), 0)
	pause := m.pre / time.Duration(max(m.together, 1))
	if len(m.pauses) > 0 {
		var sum time.Duration
		for _, p := range m.pauses {
			sum += p
		}
		pause = sum / time.Duration(len(m.pauses))
	}
	if m.per > 0 && m.phases > 1 && len(m.cum) > m.per {
		// The first repetition's profile: the rest of this one from the
		// same position, then each later one as long.
		first := m.cum[m.per]
		at := min(m.done-(m.phases-1)*m.per, m.per)
		// The pace against the first repetition's, leaning on the last
		// whole one's while little of this one is done.
		prior := first / 40
		pace := (float64(m.busy-m.since) + m.pace*float64(prior)) / float64(m.cum[at]+prior)
		units := time.Duration(pace * float64(first-m.cum[at]+time.Duration(later)*first))
		return units + time.Duration(paused)*pause, true, true
	}
	unit := m.busy / time.Duration(m.done)
	return time.Duration(m.total-m.done)*unit + time.Duration(paused)*pause, true, false
}
