package main

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/lazyvi/lazyvi/framework"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// semiSynthetic is real data with two planted columns of known importance
// under mse: perm_<first feature>, a permuted copy of the first feature
// (independent of everything else, VI 0), and z ~ N(0, 1) entering the
// response as y' = y + b z (VI b^2 Var(z) = b^2). b^2 is the share signal
// of the response's variance, so that z is about as important as a real
// feature of moderate importance whatever the response's scale.
type semiSynthetic struct {
	base   *framework.Dataset
	target int     // the response's column in base
	first  int     // the column permuted
	b      float64 // z's coefficient
}

// semiNullPrefix names the permuted copy; semiSignal the planted signal.
const (
	semiNullPrefix = "perm_"
	semiSignal     = "z"
)

// newSemiSynthetic checks the data set and its response (target "" is the
// last column) and sets b = sqrt(signal Var(y)).
func newSemiSynthetic(d *framework.Dataset, target string, signal float64) (*semiSynthetic, error) {
	if !(signal > 0) || math.IsInf(signal, 0) {
		return nil, framework.Usagef("bench coverage: --signal must be a positive share of the response's variance, got %g", signal)
	}
	_, cols := d.X.Dims()
	if cols < 2 {
		return nil, &framework.InputError{File: d.Source, Msg: fmt.Sprintf("need a response and at least one feature, found %d column(s)", cols)}
	}
	t := cols - 1
	if target != "" {
		var err error
		if t, err = d.Column(target); err != nil {
			return nil, err
		}
	}
	for _, n := range d.Names {
		if n == semiSignal || n == semiNullPrefix+d.Names[firstFeature(t)] {
			return nil, &framework.InputError{File: d.Source, Column: n, Msg: "bench coverage --setting semi adds a column of this name; rename it"}
		}
	}
	y := mat.Col(nil, t, d.X)
	vy := stat.Variance(y, nil)
	if !(vy > 0) {
		return nil, &framework.InputError{File: d.Source, Column: d.Names[t], Msg: "the response is constant"}
	}
	return &semiSynthetic{base: d, target: t, first: firstFeature(t), b: math.Sqrt(signal * vy)}, nil
}

// firstFeature is the first column that is not the response.
func firstFeature(target int) int {
	if target == 0 {
		return 1
	}
	return 0
}

// draw returns the data set of one repetition, seeded: the base columns,
// then perm_<first> and z, with the response shifted by b z; and the truth
// per feature in the Problem's order (the base features, then the two
// planted ones), NaN where unknown.
func (s *semiSynthetic) draw(seed int64) (*framework.Dataset, []float64) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x73656d6973796e74))
	n, cols := s.base.X.Dims()
	x := mat.NewDense(n, cols+2, nil)
	names := make([]string, 0, cols+2)
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
		x.Set(i, out+2, y[i]+s.b*z)
	}
	names = append(names, semiNullPrefix+s.base.Names[s.first], semiSignal, s.base.Names[s.target])
	truth = append(truth, 0, s.b*s.b)
	return &framework.Dataset{Source: s.base.Source, Names: names, X: x}, truth
}
