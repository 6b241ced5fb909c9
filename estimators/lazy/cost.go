package lazy

// The cost model by which lazy chooses how to solve a feature's ridge
// problem. Sizes: n Jacobian rows (train samples x outputs), m parameters.
// Flops and bytes are counted per method, as the code below does the work:
//
//   - dense dual: the n x n kernel (n^2 m flops from the Jacobian, an upper
//     bound for a backend's structured kernel), then Krylov steps of 2 n^2;
//     bytes: the kernel, plus the n x m Jacobian without a Kerneler.
//   - dense primal: the m x m Gram (n m^2 flops), then steps of 2 m^2;
//     bytes: the Gram twice (total and a fold's or the solve's copy).
//   - matrix-free: Krylov steps of one product with Phi and one with
//     Phi^T on vectors of m; bytes: the basis (steps x m), plus the
//     Jacobian when the backend has no JacobianMultiplier (the products
//     are then the Jacobian's, 2 n m flops each). A JacobianMultiplier's
//     product passes through the network once per sample whatever its K
//     outputs (the MLP's and the CNN's: a forward-mode or a backward pass,
//     the outputs mixed only in the head), so it is counted as 2 (n / K) m
//     flops: for one output the same, for several K times less than the
//     formed Jacobian's.
//
// Steps are what a solve at a cross-validated penalty takes on the
// simulated settings at their chosen penalties: the dense forms' Krylov
// solve to krylovTol up to about 60 (estSteps), the matrix-free one to
// energyTol a few (estMatrixFreeSteps, with a margin).
const (
	estSteps           = 60
	estMatrixFreeSteps = 10
)

// DefaultMemory is the bytes a lazy worker may hold for one feature's
// ridge problem when Estimator.Memory is 0: 1 GiB.
const DefaultMemory = 1 << 30

// solveMethod is how lazy solves a ridge problem.
type solveMethod int

const (
	methodDense      solveMethod = iota // the kernel or Gram, formed
	methodMatrixFree                    // Krylov on products with the Jacobian
)

// cost is one method's counted work and memory.
type cost struct {
	flops, bytes float64
}

// denseCost is the cheaper of the dual and primal dense forms, as newRidge
// chooses (the smaller side).
func denseCost(n, m int, kernel bool, steps int) cost {
	fn, fm := float64(n), float64(m)
	if n <= m {
		c := cost{flops: fn*fn*fm + float64(steps)*2*fn*fn, bytes: 8 * fn * fn}
		if !kernel {
			c.bytes += 8 * fn * fm
		}
		return c
	}
	return cost{flops: fn*fm*fm + float64(steps)*2*fm*fm, bytes: 16 * fm * fm}
}

// matrixFreeCost is the Krylov solve on Jacobian products, n Jacobian
// rows of k outputs each.
func matrixFreeCost(n, k, m int, multiplier bool, steps int) cost {
	fn, fm := float64(n), float64(m)
	c := cost{flops: float64(steps) * (2*productFlops(n, k, m, multiplier) + 4*float64(steps)*fm), bytes: 8 * float64(steps+4) * fm}
	if !multiplier {
		c.bytes += 8 * fn * fm
		c.flops += fn * fm // forming the Jacobian, at least
	}
	return c
}

// productFlops is the counted flops of one product with Phi or Phi^T, n
// Jacobian rows of k outputs each and m parameters: 2 (n / k) m through a
// JacobianMultiplier (a pass per sample), 2 n m through the formed
// Jacobian.
func productFlops(n, k, m int, multiplier bool) float64 {
	if multiplier && k > 1 {
		n /= k
	}
	return 2 * float64(n) * float64(m)
}

// chooseMethod returns, for n Jacobian rows of k outputs each and m
// parameters, the method with the fewer flops among those that fit in mem
// bytes; the matrix-free one when neither fits (its basis is then
// bounded by maxBasisSteps), and dense only where newRidge allows it.
func chooseMethod(n, k, m int, kernel, multiplier bool, mem float64) solveMethod {
	d, f := denseCost(n, m, kernel, estSteps), matrixFreeCost(n, k, m, multiplier, estMatrixFreeSteps)
	denseOK := d.bytes <= mem && min(n, m) <= maxFixedRidgeDim
	switch {
	case !denseOK:
		return methodMatrixFree
	case f.bytes > mem || d.flops <= f.flops:
		return methodDense
	}
	return methodMatrixFree
}

// maxBasisSteps bounds a matrix-free Krylov basis of vectors of length dim
// to half of mem bytes, and to at least min(dim, 256) steps whatever the
// bound.
func maxBasisSteps(dim int, mem float64) int {
	return min(dim, max(256, int(mem/2/(8*float64(dim)))))
}
