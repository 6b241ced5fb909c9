package measures

import (
	"sort"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
)

func init() { framework.RegisterMeasure(AUC()) }

// AUC returns the measure "auc": the area under the ROC curve of the
// predicted probabilities, i.e. the Mann-Whitney statistic
//
//	AUC = 1/(n1 n0) sum_{i: y=1} sum_{j: y=0} [1(p_i > p_j) + 1/2 1(p_i = p_j)],
//
// with DeLong's placement values as its influence function: for a positive
// i, V10_i = (#{j: y=0, p_j < p_i} + #{ties}/2)/n0 and IF_i = (V10_i - AUC)/pi1;
// for a negative j, V01_j = (#{i: y=1, p_i > p_j} + #{ties}/2)/n1 and
// IF_j = (V01_j - AUC)/pi0, pi1 = n1/n and pi0 = n0/n. Then
// var(IF)/n = var(V10)/n1 + var(V01)/n0, DeLong's variance (the efficient
// influence function of the AUC, as vimp uses). Binary only; both classes
// must be present.
func AUC() framework.Measure { return auc{} }

type auc struct{}

func (auc) Name() string                   { return "auc" }
func (auc) Supports(t framework.Task) bool { return t == framework.Binary }

func (m auc) Evaluate(y []float64, pred mat.Matrix) (framework.Score, error) {
	p, err := probs(m.Name(), y, pred)
	if err != nil {
		return framework.Score{}, err
	}
	n := len(y)
	var n1 int
	for _, v := range y {
		if v == 1 {
			n1++
		}
	}
	n0 := n - n1
	if n1 == 0 || n0 == 0 {
		return framework.Score{}, framework.Usagef("measure auc: the %d responses are all %d; auc needs both classes", n, n1/max(n1, 1))
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return p[idx[a]] < p[idx[b]] })
	place := make([]float64, n) // V10 for positives, V01 for negatives
	negBelow, posBelow := 0, 0
	for lo := 0; lo < n; {
		hi := lo
		pos, neg := 0, 0
		for hi < n && p[idx[hi]] == p[idx[lo]] {
			if y[idx[hi]] == 1 {
				pos++
			} else {
				neg++
			}
			hi++
		}
		posAbove := n1 - posBelow - pos
		v10 := (float64(negBelow) + 0.5*float64(neg)) / float64(n0)
		v01 := (float64(posAbove) + 0.5*float64(pos)) / float64(n1)
		for _, i := range idx[lo:hi] {
			if y[i] == 1 {
				place[i] = v10
			} else {
				place[i] = v01
			}
		}
		negBelow += neg
		posBelow += pos
		lo = hi
	}
	var a float64
	for i := range y {
		if y[i] == 1 {
			a += place[i]
		}
	}
	a /= float64(n1)
	inf := make([]float64, n)
	pi1, pi0 := float64(n1)/float64(n), float64(n0)/float64(n)
	for i := range y {
		if y[i] == 1 {
			inf[i] = (place[i] - a) / pi1
		} else {
			inf[i] = (place[i] - a) / pi0
		}
	}
	return framework.Score{Value: a, Influence: inf}, nil
}
