//go:build openblas

package mlp

// exactProducts: OpenBLAS picks its kernels and summation order by shape,
// so a Gram formed from chunks of the Jacobian agrees with the whole
// Jacobian's only within the arithmetic's error bound.
const exactProducts = false
