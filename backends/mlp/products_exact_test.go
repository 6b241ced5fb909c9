//go:build !openblas

package mlp

// exactProducts: this build's products are internal/gemm's (or gonum's),
// whose Syrk, Gemv and Gemm sum every element in one fixed order, so a
// Gram formed from chunks of the Jacobian equals the whole Jacobian's to
// the bit.
const exactProducts = true
