//go:build !openblas

package linalg

const openblasBuild = false
