package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
)

// semiSynthetic is real data with two planted columns of known importance
// under mse: perm_<first feature>, a permuted copy of the first feature
// (independent of everything else, VI 0), and z ~ N(0, 1) entering the
// response as y' = y + b z (VI b^2 Var(z) = b^2). b^2 is the share signal
// of the response's variance, so that z is about as important as a real
// feature of moderate importance whatever the response's scale.
//
// With copyCorr > 0 a third: copy_<c>, a noisy copy of the feature c most
// correlated with the response, Corr(copy, c) = copyCorr. It is a null
// that is not independent of the rest: the response depends on it only
// through c (y' is independent of it given the other features), so its VI
// is 0, while a network may lean on it as a proxy for c. Whether a test
// keeps its size there is the question of correlated features ("is x
// still predictive once its correlation with c is accounted for?").
type semiSynthetic struct {
	base     *dataio.Dataset
	target   int     // the response's column in base
	first    int     // the column permuted
	b        float64 // z's coefficient
	copyCol  int     // the column copied (copyCorr > 0)
	copyCorr float64 // Corr(copy, column), 0: no copy
	copySD   float64 // the copied column's standard deviation
}

// semiNullPrefix names the permuted copy; semiSignal the planted signal;
// semiCopyPrefix the noisy copy.
const (
	semiNullPrefix = "perm_"
	semiSignal     = "z"
	semiCopyPrefix = "copy_"
)

// newSemiSynthetic checks the data set and its response (target "" is the
// last column) and sets b = sqrt(signal Var(y)); copyCorr in [0, 1) is the
// noisy copy's correlation (0: none).
func newSemiSynthetic(d *dataio.Dataset, target string, signal, copyCorr float64) (*semiSynthetic, error) {
	if !(signal > 0) || math.IsInf(signal, 0) {
		return nil, framework.Usagef("coverage: the signal must be a positive share of the response's variance, got %g", signal)
	}
	if !(copyCorr >= 0 && copyCorr < 1) {
		return nil, framework.Usagef("coverage: the copy's correlation must be in [0, 1), got %g", copyCorr)
	}
	_, cols := d.X.Dims()
	if cols < 2 {
		return nil, &dataio.InputError{File: d.Source, Msg: fmt.Sprintf("need a response and at least one feature, found %d column(s)", cols)}
	}
	t := cols - 1
	if target != "" {
		var err error
		if t, err = d.Column(target); err != nil {
			return nil, err
		}
	}
	y := mat.Col(nil, t, d.X)
	vy := stat.Variance(y, nil)
	if !(vy > 0) {
		return nil, &dataio.InputError{File: d.Source, Column: d.Names[t], Msg: "the response is constant"}
	}
	s := &semiSynthetic{base: d, target: t, first: firstFeature(t), b: math.Sqrt(signal * vy), copyCol: -1, copyCorr: copyCorr}
	planted := []string{semiSignal, semiNullPrefix + d.Names[s.first]}
	if copyCorr > 0 {
		best := 0.0
		for j := range cols {
			if j == t {
				continue
			}
			xj := mat.Col(nil, j, d.X)
			if sd := stat.StdDev(xj, nil); sd > 0 {
				if c := math.Abs(stat.Correlation(xj, y, nil)); c > best {
					s.copyCol, s.copySD, best = j, sd, c
				}
			}
		}
		if s.copyCol < 0 {
			return nil, &dataio.InputError{File: d.Source, Msg: "--copy: no feature varies"}
		}
		planted = append(planted, semiCopyPrefix+d.Names[s.copyCol])
	}
	for _, n := range d.Names {
		if slices.Contains(planted, n) {
			return nil, &dataio.InputError{File: d.Source, Column: n, Msg: "bench coverage --setting semi adds a column of this name; rename it"}
		}
	}
	return s, nil
}

// firstFeature is the first column that is not the response.
func firstFeature(target int) int {
	if target == 0 {
		return 1
	}
	return 0
}

// draw returns the data set of one repetition, seeded: the base columns,
// then perm_<first>, z and (with a copy) copy_<c>, with the response
// shifted by b z; and the truth per feature in the Problem's order (the
// base features, then the planted ones), NaN where unknown. The copy's
// noise has a stream of its own, so that the other columns are the same
// with and without it.
func (s *semiSynthetic) draw(seed int64) (*dataio.Dataset, []float64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x73656d6973796e74))
	n, cols := s.base.X.Dims()
	extra := 2
	if s.copyCorr > 0 {
		extra = 3
	}
	x := mat.NewDense(n, cols+extra, nil)
	names := make([]string, 0, cols+extra)
	var truth []float64
	out := 0
	for j := 0; j < cols; j++ {
		if j == s.target {
			continue
		}
		x.SetCol(out, mat.Col(nil, j, s.base.X))
		names = append(names, s.base.Names[j])
		truth = append(truth, math.NaN())
		out++
	}
	perm := rng.Perm(n)
	y := mat.Col(nil, s.target, s.base.X)
	for i := 0; i < n; i++ {
		z := rng.NormFloat64()
		x.Set(i, out, s.base.X.At(perm[i], s.first))
		x.Set(i, out+1, z)
		x.Set(i, out+extra, y[i]+s.b*z)
	}
	names = append(names, semiNullPrefix+s.base.Names[s.first], semiSignal)
	truth = append(truth, 0, s.b*s.b)
	if s.copyCorr > 0 {
		// copy = c + e with Var(e) = Var(c) (1/r^2 - 1): Corr(copy, c) = r.
		noise := rand.New(rand.NewPCG(uint64(seed), 0x636f70795f6e6f69))
		sd := s.copySD * math.Sqrt(1/(s.copyCorr*s.copyCorr)-1)
		for i := 0; i < n; i++ {
			x.Set(i, out+2, s.base.X.At(i, s.copyCol)+sd*noise.NormFloat64())
		}
		names = append(names, semiCopyPrefix+s.base.Names[s.copyCol])
		truth = append(truth, 0)
	}
	names = append(names, s.base.Names[s.target])
	return &dataio.Dataset{Source: s.base.Source, Names: names, X: x}, truth
}
