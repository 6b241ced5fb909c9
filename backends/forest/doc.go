// Package forest is a random forest of CART trees (Breiman 2001), written
// for lazyvi: regression and classification (binary and multiclass, K
// classes), deterministic under a seed, with
// out-of-bag error. Importing it (a blank import is enough) registers the
// backend as "forest" for the dropout and retrain estimators; a forest has
// no parameter gradients, so lazy does not apply.
//
// # Trees
//
// Each tree is grown on a bootstrap sample of the n training rows (n draws
// with replacement; option bootstrap=false uses every row once). At each
// node, mtry features are drawn without replacement (when none of them can
// split the node, the others are tried in random order, as scikit-learn
// does) and for each the node's rows are sorted by the feature and every
// cut between distinct values that leaves at least min_leaf rows on both
// sides is scored: the decrease of the sum of squared errors for
// regression, of the Gini impurity for classification. The best cut's
// threshold is the midpoint between the two values. A node becomes a leaf
// when it is pure (constant response or one class), has fewer than
// 2 min_leaf rows, is at max_depth, or no cut decreases the impurity. A
// leaf predicts its rows' mean response, or their class shares.
//
// Defaults: 100 trees, no depth bound, min_leaf 5 for regression and 1 for
// classification, mtry p/3 for regression and sqrt(p) for classification
// (randomForest's defaults).
//
// # Forest
//
// The forest predicts the mean of its trees' predictions: the mean
// response, or the mean class shares (so a binary model's prediction is
// P(Y = 1), as the framework wants).
//
// The out-of-bag error (Forest.OOB, Model.OOB) predicts each training row
// with the trees whose bootstrap sample left it out (about 37% of them) and
// reports the MSE and R^2 (regression) or the error rate and log-loss
// (classification) over the rows that some tree left out. It estimates the
// test error without a held-out set.
//
// # Determinism and concurrency
//
// Tree t draws its bootstrap sample and its split candidates from its own
// generator, math/rand/v2's PCG seeded with (Seed, t), and sums over trees
// run in tree order; so the same seed and data give the same forest and
// bit-identical predictions whatever the number of workers. Trees are grown
// by a pool of Config.Workers goroutines (default GOMAXPROCS), and
// predictions are computed by blocks of rows on the same number. A fitted
// forest is read-only and safe for concurrent use; inputs are never
// modified.
package forest
