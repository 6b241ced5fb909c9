// Package lazy is the lazy estimator of lazyvi: LazyVI (Gao, Stevens,
// Willett, Raskutti), the full network moved by a ridge regression of its
// residuals on its own gradient features instead of a retraining per
// removed feature. It registers itself with the framework as "lazy";
// import the package for its side effect, or use Estimator directly:
//
//	import _ "github.com/lazyvi/lazyvi/estimators/lazy"
package lazy

import "github.com/lazyvi/lazyvi/framework"

func init() { framework.RegisterEstimator(Estimator{}) }
