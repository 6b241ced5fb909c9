package shapley

// Plan is the set of subsets an estimate has drawn so far from its Design:
// the enumerated subsets, then the distinct sampled ones in order of first
// draw, and every sampled complement pair as indices into Subsets. A
// subset drawn again adds weight, not a reduced model.
type Plan struct {
	Design  *Design
	Subsets []Subset
	Pairs   [][2]int
	Batches int // batches drawn

	index map[string]int
}

// NewPlan starts a plan with the design's enumerated subsets.
func NewPlan(d *Design) *Plan {
	pl := &Plan{Design: d, index: make(map[string]int, len(d.Enumerated))}
	for _, s := range d.Enumerated {
		pl.add(s)
	}
	return pl
}

func (pl *Plan) add(s Subset) (int, bool) {
	k := s.key()
	if i, ok := pl.index[k]; ok {
		return i, false
	}
	pl.index[k] = len(pl.Subsets)
	pl.Subsets = append(pl.Subsets, s)
	return len(pl.Subsets) - 1, true
}

// Draw adds the next batch's pairs, in order, as long as the plan stays
// within max distinct subsets (a pair that would pass it ends the batch
// early), and reports how many pairs it added.
func (pl *Plan) Draw(max int) int {
	b := pl.Design.Batch(pl.Batches, BatchPairs)
	pl.Batches++
	added := 0
	for _, pr := range b {
		fresh := 0
		for _, s := range pr {
			if _, ok := pl.index[s.key()]; !ok {
				fresh++
			}
		}
		if len(pl.Subsets)+fresh > max {
			break
		}
		i, _ := pl.add(pr[0])
		j, _ := pl.add(pr[1])
		pl.Pairs = append(pl.Pairs, [2]int{i, j})
		added++
	}
	return added
}

// Weights returns each subset's weight in the least squares: the kernel
// weight of an enumerated subset, and for a sampled one the kernel's
// remaining mass 1 - Mass shared equally by the 2 N subsets of the N pairs
// drawn (a subset drawn twice has twice the weight).
func (pl *Plan) Weights() []float64 {
	d := pl.Design
	w := make([]float64, len(pl.Subsets))
	copy(w, d.Weights)
	if n := len(pl.Pairs); n > 0 {
		u := (1 - d.Mass) / float64(2*n)
		for _, pr := range pl.Pairs {
			w[pr[0]] += u
			w[pr[1]] += u
		}
	}
	return w
}
