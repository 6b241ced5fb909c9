package forest

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// node is one node of a tree. A leaf has left < 0; its value is the mean
// response (regression) or the index of its class distribution in
// tree.probs (classification).
type node struct {
	feature     int32
	left, right int32
	threshold   float64 // rows with x[feature] <= threshold go left
	value       float64
}

// tree is a fitted CART tree.
type tree struct {
	nodes []node
	probs []float64 // classification: K class shares per leaf
}

// data is the training set in the layout the splitter reads: one slice per
// feature (column-major), the responses, and for classification the class
// of each row.
type data struct {
	n, p    int
	cols    [][]float64
	y       []float64
	class   []int32
	classes int // 0 for regression
}

// builder grows one tree; its scratch buffers are reused across the trees
// a worker builds.
type builder struct {
	d      *data
	cfg    *Config
	mtry   int
	rng    *rand.Rand
	feats  []int
	pairs  []pair
	countL []float64 // classification scratch: class counts left of the cut
	countT []float64 // and in the whole node
	t      *tree
}

type pair struct {
	v float64 // feature value
	y float64 // response, or class as a float
}

type task struct {
	lo, hi, depth int
	at            int32 // index of the node to fill
}

// grow builds a tree on the rows idx (with repeats for a bootstrap sample),
// which it reorders.
func (b *builder) grow(idx []int32) *tree {
	b.t = &tree{}
	b.t.nodes = append(b.t.nodes, node{})
	stack := []task{{lo: 0, hi: len(idx), depth: 0, at: 0}}
	for len(stack) > 0 {
		tk := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		rows := idx[tk.lo:tk.hi]
		f, thr, ok := b.split(rows, tk.depth)
		if !ok {
			b.leaf(tk.at, rows)
			continue
		}
		// Partition rows: x[f] <= thr first.
		col := b.d.cols[f]
		i, j := 0, len(rows)-1
		for i <= j {
			if col[rows[i]] <= thr {
				i++
			} else {
				rows[i], rows[j] = rows[j], rows[i]
				j--
			}
		}
		l := int32(len(b.t.nodes))
		b.t.nodes = append(b.t.nodes, node{}, node{})
		b.t.nodes[tk.at] = node{feature: int32(f), threshold: thr, left: l, right: l + 1}
		// Right pushed first: the left subtree is built first, so node
		// numbering is depth-first from the left.
		stack = append(stack,
			task{lo: tk.lo + i, hi: tk.hi, depth: tk.depth + 1, at: l + 1},
			task{lo: tk.lo, hi: tk.lo + i, depth: tk.depth + 1, at: l})
	}
	return b.t
}

// leaf makes node at a leaf for rows.
func (b *builder) leaf(at int32, rows []int32) {
	nd := node{left: -1, right: -1, feature: -1}
	if k := b.d.classes; k > 0 {
		off := len(b.t.probs)
		b.t.probs = append(b.t.probs, make([]float64, k)...)
		pr := b.t.probs[off:]
		for _, r := range rows {
			pr[b.d.class[r]]++
		}
		for c := range pr {
			pr[c] /= float64(len(rows))
		}
		nd.value = float64(off / k)
	} else {
		s := 0.0
		for _, r := range rows {
			s += b.d.y[r]
		}
		nd.value = s / float64(len(rows))
	}
	b.t.nodes[at] = nd
}

// split finds the best split of rows over mtry features drawn at random
// (and, when none of them can split the node, over the other features, as
// scikit-learn does). ok is false when the node must be a leaf.
func (b *builder) split(rows []int32, depth int) (feature int, threshold float64, ok bool) {
	m := len(rows)
	minLeaf := b.cfg.MinLeaf
	if m < 2*minLeaf || m < 2 || (b.cfg.MaxDepth > 0 && depth >= b.cfg.MaxDepth) {
		return 0, 0, false
	}
	// Node impurity baseline and purity check.
	var base float64
	if k := b.d.classes; k > 0 {
		clear(b.countT)
		for _, r := range rows {
			b.countT[b.d.class[r]]++
		}
		pure := false
		for _, c := range b.countT {
			base += c * c
			pure = pure || c == float64(m)
		}
		if pure {
			return 0, 0, false
		}
		base /= float64(m)
	} else {
		s := 0.0
		first, constant := b.d.y[rows[0]], true
		for _, r := range rows {
			s += b.d.y[r]
			constant = constant && b.d.y[r] == first
		}
		if constant {
			return 0, 0, false
		}
		base = s * s / float64(m)
	}

	// Partial Fisher-Yates over the feature list: position t holds the
	// t-th feature drawn.
	best := base
	bestF, bestT := -1, 0.0
	p := len(b.feats)
	for t := 0; t < p; t++ {
		if t >= b.mtry && bestF >= 0 {
			break
		}
		u := t + b.rng.IntN(p-t)
		b.feats[t], b.feats[u] = b.feats[u], b.feats[t]
		f := b.feats[t]
		crit, thr, found := b.bestCut(rows, f)
		if found && crit > best {
			best, bestF, bestT = crit, f, thr
		}
	}
	// Require a decrease in impurity beyond round-off.
	if bestF < 0 || best-base <= 1e-12*math.Abs(base) {
		return 0, 0, false
	}
	return bestF, bestT, true
}

// bestCut sorts rows by feature f and returns the best criterion (the
// proxy sum over children of the children's sum^2 / n, or of sum_c n_c^2
// / n for Gini) and its threshold. found is false if no cut leaves minLeaf
// rows on each side.
func (b *builder) bestCut(rows []int32, f int) (crit, thr float64, found bool) {
	col := b.d.cols[f]
	ps := b.pairs[:len(rows)]
	if b.d.classes > 0 {
		for i, r := range rows {
			ps[i] = pair{v: col[r], y: float64(b.d.class[r])}
		}
	} else {
		for i, r := range rows {
			ps[i] = pair{v: col[r], y: b.d.y[r]}
		}
	}
	slices.SortFunc(ps, func(a, c pair) int { return cmp.Compare(a.v, c.v) })
	m := len(ps)
	if ps[0].v == ps[m-1].v {
		return 0, 0, false
	}
	minLeaf := b.cfg.MinLeaf
	best, bestAt := math.Inf(-1), -1
	if k := b.d.classes; k > 0 {
		// Gini: maximise sum_c L_c^2 / nL + sum_c R_c^2 / nR, with the
		// sums of squares kept incrementally.
		clear(b.countL)
		var sqL, sqR float64
		for _, c := range b.countT {
			sqR += c * c
		}
		for i := 0; i < m-1; i++ {
			c := int(ps[i].y)
			l, r := b.countL[c], b.countT[c]-b.countL[c]
			sqL += 2*l + 1 // (l+1)^2 - l^2
			sqR -= 2*r - 1 // (r-1)^2 - r^2
			b.countL[c] = l + 1
			nl := i + 1
			if nl < minLeaf || ps[i].v == ps[i+1].v {
				continue
			}
			if m-nl < minLeaf {
				break
			}
			if v := sqL/float64(nl) + sqR/float64(m-nl); v > best {
				best, bestAt = v, i
			}
		}
	} else {
		total := 0.0
		for _, q := range ps {
			total += q.y
		}
		sl := 0.0
		for i := 0; i < m-1; i++ {
			sl += ps[i].y
			nl := i + 1
			if nl < minLeaf || ps[i].v == ps[i+1].v {
				continue
			}
			if m-nl < minLeaf {
				break
			}
			sr := total - sl
			if v := sl*sl/float64(nl) + sr*sr/float64(m-nl); v > best {
				best, bestAt = v, i
			}
		}
	}
	if bestAt < 0 {
		return 0, 0, false
	}
	lo, hi := ps[bestAt].v, ps[bestAt+1].v
	thr = lo + (hi-lo)/2
	if !(thr < hi) { // the midpoint rounded up to hi
		thr = lo
	}
	return best, thr, true
}

// leafOf returns the leaf node that the row x (one value per feature)
// falls into.
func (t *tree) leafOf(x []float64) *node {
	nd := &t.nodes[0]
	for nd.left >= 0 {
		if x[nd.feature] <= nd.threshold {
			nd = &t.nodes[nd.left]
		} else {
			nd = &t.nodes[nd.right]
		}
	}
	return nd
}
