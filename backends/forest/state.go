package forest

import (
	"context"

	"github.com/lazyvi/lazyvi/backends/internal/state"
	"github.com/lazyvi/lazyvi/framework"
)

// savedState is a fitted forest, for framework.Persister.
type savedState struct {
	P     int
	YMean float64
	Trees []savedTree
	OOB   OOB
}

type savedTree struct {
	Feature, Left, Right []int32
	Threshold, Value     []float64
	Probs                []float64
}

const stateVersion = 1

var _ framework.Persister = (*Model)(nil)

// SaveState implements framework.Persister.
func (md *Model) SaveState(context.Context) ([]byte, error) {
	if md.f == nil {
		return nil, framework.Usagef("forest: save state: model is not fitted")
	}
	s := savedState{P: md.f.p, YMean: md.f.ymean, OOB: md.f.oob, Trees: make([]savedTree, len(md.f.trees))}
	for i, t := range md.f.trees {
		st := savedTree{Probs: t.probs}
		for _, nd := range t.nodes {
			st.Feature = append(st.Feature, nd.feature)
			st.Left = append(st.Left, nd.left)
			st.Right = append(st.Right, nd.right)
			st.Threshold = append(st.Threshold, nd.threshold)
			st.Value = append(st.Value, nd.value)
		}
		s.Trees[i] = st
	}
	return state.Encode("forest", stateVersion, s)
}

// LoadState implements framework.Persister; every node's links and
// features are checked, so that a loaded forest cannot index out of range.
func (md *Model) LoadState(_ context.Context, b []byte) error {
	if md.f != nil {
		return framework.Usagef("forest: load state: model is already fitted")
	}
	var s savedState
	if err := state.Decode("forest", stateVersion, b, &s); err != nil {
		return err
	}
	if err := state.CheckLen("forest", "inputs", s.P, md.inputs); err != nil {
		return err
	}
	cfg := md.cfg.withDefaults(md.inputs) // as Fit resolves it
	if err := state.CheckLen("forest", "trees", len(s.Trees), cfg.Trees); err != nil {
		return err
	}
	f := &Forest{cfg: cfg, p: s.P, ymean: s.YMean, oob: s.OOB, trees: make([]*tree, len(s.Trees))}
	for i, st := range s.Trees {
		n := len(st.Feature)
		if n == 0 || len(st.Left) != n || len(st.Right) != n || len(st.Threshold) != n || len(st.Value) != n {
			return framework.Usagef("forest: load state: tree %d is damaged", i)
		}
		if k := cfg.Classes; k > 0 && len(st.Probs)%k != 0 {
			return framework.Usagef("forest: load state: tree %d has %d class shares for %d classes", i, len(st.Probs), k)
		}
		t := &tree{nodes: make([]node, n), probs: st.Probs}
		for j := range t.nodes {
			nd := node{feature: st.Feature[j], left: st.Left[j], right: st.Right[j], threshold: st.Threshold[j], value: st.Value[j]}
			if !validNode(nd, j, n, s.P, len(st.Probs), cfg.Classes) {
				return framework.Usagef("forest: load state: tree %d, node %d is damaged", i, j)
			}
			t.nodes[j] = nd
		}
		f.trees[i] = t
	}
	md.f = f
	return nil
}

// validNode reports whether node j of a tree of n nodes (p features, nprobs
// class shares for k classes, 0 for regression) can be walked: a leaf has
// no children (and, classifying, names a whole block of shares); an inner
// node splits on a feature and has children after itself (as grow writes
// them), so a walk always ends.
func validNode(nd node, j, n, p, nprobs, k int) bool {
	if nd.left < 0 {
		if nd.right >= 0 {
			return false
		}
		if k > 0 {
			off := nd.value * float64(k)
			return nd.value >= 0 && nd.value == float64(int(nd.value)) && off+float64(k) <= float64(nprobs)
		}
		return true
	}
	return int(nd.left) > j && int(nd.left) < n && int(nd.right) > j && int(nd.right) < n &&
		nd.feature >= 0 && int(nd.feature) < p
}
