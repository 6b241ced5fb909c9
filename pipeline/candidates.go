package pipeline

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

// Candidate is one setting of backend options that Prepare may train the
// full model with (Config.Candidates): its Options are laid over
// Config.Options. The framework knows nothing of what they mean; vi's
// --hidden auto makes one Candidate per hidden-layer architecture.
type Candidate struct {
	Name    string // how the report names it (full.hidden)
	Options map[string]string
}

// SelectTol is how much lower (relatively) a later candidate's validation
// loss must be than an earlier one's to be chosen over it: candidates come
// cheapest first, and a larger network that is no better on the
// validation slice only makes every estimator slower.
const SelectTol = 0.01

// MinSelectRows is the smallest validation slice that chooses among the
// candidates. The relative standard error of a mean squared error on n
// rows is about sqrt(2/n) (18% on 60 rows, 9% on 250), and each
// candidate's reported loss is the lowest of its epochs on those same
// rows, so on a small slice the largest network, whose loss curve
// fluctuates most, tends to win by chance, scoring best on the slice and
// worse than a small one on the evaluation rows. Below MinSelectRows
// the first (cheapest) candidate is kept, and the others are not trained.
const MinSelectRows = 200

// selection is the outcome of fitting the candidates.
type selection struct {
	model  framework.Model
	spec   framework.ModelSpec // the chosen candidate's spec
	chosen string
	scores []framework.CandidateScore
	note   string // why the choice was not by the validation loss, if it was not
}

// selectFull trains one model per candidate on the rows of x and keeps the
// one whose validation loss is lowest, preferring an earlier candidate
// unless a later one is lower by more than SelectTol; the others are
// released. Every candidate holds out the same validation slice (the
// backend's, seeded by spec.Seed), so their losses compare. When the
// first candidate's slice is smaller than MinSelectRows (or it reports
// none) it is kept and the others are not trained (fitCandidates).
// Without candidates it trains spec's model.
func selectFull(ctx context.Context, be framework.Backend, spec framework.ModelSpec, cands []Candidate, x *mat.Dense, y []float64, sl *slots) (*selection, error) {
	if len(cands) == 0 {
		m, err := fitOne(ctx, be, spec, x, y)
		if err != nil {
			return nil, err
		}
		return &selection{model: m, spec: spec}, nil
	}
	specs := make([]framework.ModelSpec, len(cands))
	for i, c := range cands {
		specs[i] = spec
		specs[i].Options = mergeOptions(spec.Options, c.Options)
	}
	models, errs := fitCandidates(ctx, be, specs, x, y, sl)
	sel := &selection{}
	if errs[0] == nil {
		switch first := framework.FitReportOf(models[0]); {
		case first.ValidRows == 0:
			sel.note = "no validation loss to choose by: the first candidate"
		case first.ValidRows < MinSelectRows:
			sel.note = fmt.Sprintf("%d validation rows are too few to choose by (below %d): the first candidate", first.ValidRows, MinSelectRows)
		}
	}
	release := func(keep int) {
		for i, m := range models {
			if m != nil && i != keep {
				framework.Release(m)
			}
		}
	}
	for i, err := range errs {
		if err != nil {
			release(-1)
			return nil, fmt.Errorf("candidate %s: %w", cands[i].Name, err)
		}
	}
	best, bestLoss := -1, 0.0
	for i, m := range models {
		if m == nil {
			continue // not trained: the first was kept
		}
		fr := framework.FitReportOf(m)
		score := framework.CandidateScore{Name: cands[i].Name, Epochs: fr.Epochs, StoppedBy: fr.StoppedBy}
		// Without a validation slice (a backend that does not say)
		// there is nothing to choose by.
		if loss := fr.ValidLoss; fr.ValidRows > 0 && !math.IsNaN(loss) && !math.IsInf(loss, 0) {
			score.ValidLoss = &loss
			if best < 0 || loss < bestLoss*(1-SelectTol) {
				best, bestLoss = i, loss
			}
		}
		sel.scores = append(sel.scores, score)
	}
	if best < 0 || sel.note != "" {
		best = 0
	}
	release(best)
	sel.model, sel.spec, sel.chosen = models[best], specs[best], cands[best].Name
	return sel, nil
}

// fitCandidates fits the models of specs (candidates, cheapest first), the
// first and the costliest first: the others train only where the first's
// validation slice chooses (at least MinSelectRows rows), which only its
// fit tells, and the costliest, started beside it, would otherwise train
// alone at the end. The rest follow, costliest first, as fits end. Where
// the first fails or its slice does not choose, the fits started beside it
// are cancelled and released, and only the first's model or error is
// returned. The models are the same whatever the order: each fit is its
// spec's alone.
//
// The caller holds one of sl's slots (its fold's turn), in which the fits
// run one after another; a fit beside them takes another of sl's slots,
// when one is free, so that the candidates train beside the run's other
// work (Run's reductions and the other repetitions' folds) without adding
// to it. Once every fit has started and the caller's seat is free, the
// caller's slot is lent back to the run (slots.lend) until the fits beside
// it end. With sl nil (a caller outside a run's slots), up to one fit per
// CPU.
func fitCandidates(ctx context.Context, be framework.Backend, specs []framework.ModelSpec, x *mat.Dense, y []float64, sl *slots) ([]framework.Model, []error) {
	n := len(specs)
	models, errs := make([]framework.Model, n), make([]error, n)
	run := sl // the run's slots, where the caller holds one
	if sl == nil {
		// One seat per CPU beside the caller's (none on one CPU: a send on
		// an unbuffered channel that nothing receives never completes).
		sl = &slots{c: make(chan struct{}, runtime.NumCPU()-1), lent: make(chan struct{})}
	}
	own := make(chan struct{}, 1) // the caller's slot, free when no fit holds it
	// seat waits for the caller's slot (taken first when free) or one of
	// sl's, or for the first fit to end (done) or ctx; it returns the
	// seat's release, nil when it took none.
	seat := func(c context.Context, done <-chan struct{}) func() { return sl.seat(c, own, done) }
	beside, cancel := context.WithCancel(ctx) // the fits started beside the first
	defer cancel()
	var wg sync.WaitGroup
	start := func(i int, c context.Context, release func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer release()
			models[i], errs[i] = fitOne(c, be, specs[i], x, y)
		}()
	}
	first := make(chan struct{})
	own <- struct{}{}
	go func() {
		defer close(first)
		defer func() { <-own }()
		models[0], errs[0] = fitOne(ctx, be, specs[0], x, y)
	}()
	next := n - 1 // the next to start: costliest first
	for next > 0 {
		release := seat(beside, first)
		if release == nil {
			break // the first ended (or ctx did): whether to go on is its to say
		}
		start(next, beside, release)
		next--
	}
	<-first
	if errs[0] != nil || framework.FitReportOf(models[0]).ValidRows < MinSelectRows {
		cancel()
		wg.Wait()
		for i := 1; i < n; i++ {
			if models[i] != nil {
				framework.Release(models[i])
			}
			models[i], errs[i] = nil, nil
		}
		return models, errs
	}
	for ; next > 0; next-- {
		release := seat(ctx, nil)
		if release == nil {
			errs[next] = ctx.Err()
			continue
		}
		start(next, ctx, release)
	}
	// Every fit has started: once the caller's own seat is free for good,
	// its slot goes back to the run while the fits beside it finish (a
	// costly candidate that trains alone leaves a core to other work).
	own <- struct{}{}
	run.lend(ctx, wg.Wait)
	return models, errs
}

// fitOne makes a model of spec on be and fits it to x and y.
func fitOne(ctx context.Context, be framework.Backend, spec framework.ModelSpec, x *mat.Dense, y []float64) (_ framework.Model, err error) {
	// A backend that panics (a bug in it, or in the numerics under it)
	// must not take the process down with it: a backend in the caller's
	// own process (vi's built-in ones) shares its fate. The panic becomes
	// this fit's error, as a reduction's does (reduction.run).
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (panic): %v", r)
		}
	}()
	m, err := be.New(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := m.Fit(ctx, x, y); err != nil {
		framework.Release(m)
		return nil, fmt.Errorf("fit: %w", err)
	}
	return m, nil
}

// mergeOptions returns base with over laid on it, in a new map.
func mergeOptions(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
