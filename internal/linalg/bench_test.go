package linalg

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The linear setting's primal Gram: Phi is n1 x M = 3333 x 401 (train rows
// by MLP parameters), G = Phi^T Phi.
const gramRows, gramCols = 3333, 401

func gramPhi() *mat.Dense {
	rng := rand.New(rand.NewPCG(1, 1))
	data := make([]float64, gramRows*gramCols)
	for i := range data {
		data[i] = rng.NormFloat64()
	}
	return mat.NewDense(gramRows, gramCols, data)
}

// BenchmarkGramMul is a plain mat.Dense.Mul of Phi^T Phi: 2 n1 M^2 flops
// (about 1.07 GFLOP), reported as GFLOP/s.
func BenchmarkGramMul(b *testing.B) {
	phi := gramPhi()
	g := mat.NewDense(gramCols, gramCols, nil)
	b.ResetTimer()
	for b.Loop() {
		g.Mul(phi.T(), phi)
	}
	b.ReportMetric(2*gramRows*gramCols*gramCols*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGramSyrk is the same Gram by a symmetric rank-k update (Dsyrk
// through mat.SymDense.SymOuterK): half the flops of the general product,
// GFLOP/s counted on the n1 M^2 flops it does.
func BenchmarkGramSyrk(b *testing.B) {
	phi := gramPhi()
	g := mat.NewSymDense(gramCols, nil)
	b.ResetTimer()
	for b.Loop() {
		g.SymOuterK(1, phi.T())
	}
	b.ReportMetric(gramRows*gramCols*gramCols*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
