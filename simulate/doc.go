// Package simulate generates the simulated data sets of the LazyVI paper
// (Gao, Stevens, Willett, Raskutti 2022, section 5), with the true variable
// importance where it is known:
//
//   - linear (5.1): p = 6, x ~ N(0, Sigma), Sigma = I except
//     Corr(x1, x2) = rho, y = 1.5 x1 + 1.2 x2 + x3 + eps, Var(eps) = 0.1;
//     true VI under MSE (1.5²(1-rho²), 1.2²(1-rho²), 1, 0, 0, 0).
//   - binary (5.2): x ~ N(0, I_4), y ~ Bernoulli(Phi(2.5 x1 + 3.5 x2)); true
//     VI under accuracy (0.136, 0.236, 0, 0), computed in closed form.
//   - highdim (5.3): p = 100, Corr(x1, x2) = rho (0.5 in the paper),
//     y = V relu(W x) + eps with a fixed random network W, V; truth unknown.
//
// Every data set is a deterministic function of its arguments: the same seed
// gives the same data (math/rand/v2's PCG). A Data holds the columns
// x1..xp, y (response last, as the CLI expects of a CSV), writes itself as
// CSV, and describes its truth as JSON.
package simulate
