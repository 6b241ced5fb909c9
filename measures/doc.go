// Package measures provides the predictiveness measures of lazyvi: mse and r2
// for regression, accuracy, logloss and auc for binary classification. Each is a
// framework.Measure and registers itself by name in init, so a blank import
//
//	import _ "github.com/lazyvi/lazyvi/measures"
//
// makes them available to framework.LookupMeasure.
//
// Every measure is larger-is-better (mse reports -MSE, logloss reports the
// negative mean log-loss) and returns, with its value, each sample's
// influence on it: for the decomposable measures (mse, accuracy, logloss) the
// per-sample term minus its mean, for r2 the delta-method influence function
// of 1 - MSE/Var(y), for auc DeLong's placement values. For two models scored on the same samples,
// sd(IF_full - IF_reduced)/sqrt(n) is then the standard error of the
// difference of their values, i.e. of a variable importance estimate.
package measures
