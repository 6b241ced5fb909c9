package linear

import (
	"context"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/jacobian"
)

var _ framework.JacobianMultiplier = (*Model)(nil)

// JacobianMul returns Phi(x) V (framework.JacobianMultiplier). The
// Jacobian is the n x (p+1) design itself, so the products are taken with
// it: no larger than its inputs.
func (md *Model) JacobianMul(ctx context.Context, x mat.Matrix, v *mat.Dense) (*mat.Dense, error) {
	return jacobian.Products(ctx, md, x, v, false)
}

// JacobianTMul returns Phi(x)^T U (framework.JacobianMultiplier).
func (md *Model) JacobianTMul(ctx context.Context, x mat.Matrix, u *mat.Dense) (*mat.Dense, error) {
	return jacobian.Products(ctx, md, x, u, true)
}
