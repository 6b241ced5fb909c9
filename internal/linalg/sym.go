package linalg

import "gonum.org/v1/gonum/mat"

// Full returns the symmetric a as a Dense with both triangles filled from
// a's upper triangle (gonum's SymDense stores only that one).
func Full(a *mat.SymDense) *mat.Dense {
	n := a.SymmetricDim()
	if n == 0 {
		return &mat.Dense{}
	}
	raw := a.RawSymmetric()
	d := mat.NewDense(n, n, nil)
	out := d.RawMatrix()
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		copy(out.Data[i*n+i:(i+1)*n], row[i:])
		for j := i + 1; j < n; j++ {
			out.Data[j*n+i] = row[j]
		}
	}
	return d
}
