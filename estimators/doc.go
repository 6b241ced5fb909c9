// Package estimators holds the simple variable-importance estimators of
// lazyvi: dropout (the full model on data with the feature replaced by its
// mean), retrain (a new model of the same architecture trained without the
// feature) and lazy-es (the full network trained on for a few steps without
// the feature). Lazy (LazyVI: the full network moved by a ridge regression
// of its residuals on its own gradient features) is the package
// estimators/lazy. Each registers itself with the framework under its name;
// import the package for its side effect:
//
//	import _ "github.com/lazyvi/lazyvi/estimators"
//
// An estimator carries its own settings (lazy.Estimator{Folds, Lambda},
// LazyES{Steps}; as strings through framework.Configurer, which is how vi's
// --folds, --lambda and --es-steps reach them) and says what it needs of a
// backend (framework.Needer), how it describes itself (framework.Describer)
// and what its results carry beyond the common fields
// (framework.Summarizer: lazy's "lambda" and "no_update"). A new estimator
// is one file here (or in a package of its own) that registers itself: the
// framework and the CLI find all of that through the registry.
package estimators

import "github.com/lazyvi/lazyvi/framework"

func init() {
	framework.RegisterEstimator(Dropout{})
	framework.RegisterEstimator(Retrain{})
}
