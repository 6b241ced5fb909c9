//go:build !openblas

package linalg

import lapackgonum "gonum.org/v1/gonum/lapack/gonum"

const implName = "gonum"

var lapackImpl = lapackgonum.Implementation{}
