// Package estimators holds the variable-importance estimators of lazyvi:
// dropout (the full model on data with the feature replaced by its mean),
// retrain (a new model of the same architecture trained without the feature)
// and lazy (LazyVI: the full network moved by a ridge regression of its
// residuals on its own gradient features). Each registers itself with the
// framework under its name; import the package for its side effect:
//
//	import _ "github.com/lazyvi/lazyvi/estimators"
package estimators

import "github.com/lazyvi/lazyvi/framework"

func init() {
	framework.RegisterEstimator(Dropout{})
	framework.RegisterEstimator(Retrain{})
	framework.RegisterEstimator(Lazy{})
}
