// Package shapley estimates Shapley population variable importance (SPVIM,
// Williamson and Feng 2020, "Efficient nonparametric statistical inference
// on population feature importance using Shapley values") with reduced
// models from any lazyvi estimator: lazy (LazyVI from the full network's
// parameters), retrain or dropout.
//
// # The target
//
// For a predictiveness measure V (larger is better) and v(S) = V(f_{0,S},
// P_0), f_{0,S} the best predictor using only the features in S, the
// Shapley value of feature j is
//
//	psi_j = sum_{S subset of [p] \ {j}} (1/p) C(p-1,|S|)^-1 [v(S u {j}) - v(S)].
//
// The values sum to v([p]) - v({}) (efficiency). A reduced model on S keeps
// the features in S and replaces the others by their train means, the same
// way a group of features is dropped everywhere in lazyvi; v({}) is the
// intercept-only model (the train split's mean response) and v([p]) the
// full model, trained once. Every v is measured on the evaluation split.
// The players need not be single features: a player is a framework.Feature,
// a group of columns kept or dropped together (Players resolves groups as
// pipeline.Run does).
//
// # Subsets
//
// psi is also the solution of the constrained weighted least squares
// (Charnes et al. 1988)
//
//	minimise sum_{0<|S|<p} w(S) (v(S) - v({}) - z_S^T psi)^2  s.t.  1^T psi = v([p]) - v({})
//
// with z_S the indicator of S and the Shapley kernel w(S) = (p-1) /
// (C(p,|S|) |S| (p-|S|)), which is proportional to C(p-2,|S|-1)^-1 per
// subset (KernelWeight); the size |S| = s carries the kernel mass
// proportional to 1/(s(p-s)) (SizeProbs). A Design chooses the subsets:
//
//   - every subset with its weight while 2^p - 2 <= ExactBudget (1022, p <=
//     10), or with exact: the values are exact for the estimated v;
//   - otherwise the size pairs {1, p-1}, {2, p-2}, ... heaviest first, every
//     subset of them at its exact weight, while their count stays within
//     min(ExactBudget, budget/2) (shap's KernelExplainer and R's kernelshap
//     do the same), and the other sizes sampled: a size with probability
//     proportional to its kernel mass, a uniform subset S of it and its
//     complement, a pair sharing the sampled sizes' mass 1 - Mass equally
//     with the other pairs drawn (a subset drawn again adds weight, not a
//     reduced model). Pairs come in batches of BatchPairs, batch b drawn
//     from a PCG seeded by the run's seed and b alone, so the subsets do
//     not depend on scheduling and an interrupted run resumes them.
//
// A sampled Plan grows batch by batch until its Stop says the sampling
// error is negligible (converge): by default the largest sampling SE at
// most 0.025 of the range of the values (SAGE's rule, RuleRange), checked
// from MinPairs(p) pairs on, within a cap of reduced models (DefaultMaxSubsets)
// or at a fixed number (Stop.Subsets). A positive sampling SE over a zero
// range never meets the rule: such a run stops at its cap, not converged.
// The forecast of the remaining subsets, 2 N ((f/t)^2 - 1) for N pairs, the
// figure f and the threshold t (SAGE's forecast), drives the progress
// report. docs/shapley.md has the simulation behind the rule.
//
// # The least squares
//
// With psi_0 = v({}) substituted, psi = (Delta/p) 1 + U u, U an orthonormal
// basis of the complement of the ones vector, Delta = v([p]) - v({}),
// A = sum_k w_k z_k z_k^T and b = sum_k w_k z_k (v_k - v({})):
//
//	psi = B b + (I - B A) 1 Delta/p,   B = U (U^T A U)^+ U^T,
//
// so psi is linear in the estimated v's and the constraint holds exactly
// (Solve).
//
// # Standard errors
//
// Following Williamson and Feng (Theorem 1 and vimp's spvim_ics/spvim_se),
// the variance is the sum of two independent parts:
//
//	se_j^2 = Var_i(phi_j(Z_i)) / n2 + Var_i(zeta_j(pair_i)) / N
//
// phi_j is the influence function from estimating V on the n2 evaluation
// samples: phi_j = sum_S dpsi_j/dv(S) IF_S, the sum including v({}) and
// v([p]), with IF_S the measure's influence function
// (framework.Score.Influence) of the reduced model on S. The coefficients
// are those of the constrained solution above (vimp differentiates the
// unconstrained least squares instead); the sample variance uses the divisor
// n2 - 1, as pipeline.Estimate does.
//
// The subset-sampling part is over pairs, the sampling unit: to first
// order pair i moves psi by zeta_i = (1 - Mass) B (z_S r_S + z_Sc r_Sc) / 2,
// r_S = v(S) - v({}) - z_S^T psi, and the sampling variance is
// var_i(zeta_i) / N over the N pairs (PairSamplingSE), multiplied by
// N / (N - h) with h = tr(B A_sampled), the leverage of the sampled pairs
// in the fit (p - 1 without enumerated sizes): the residuals are in-sample,
// so their spread is too small by that factor (the HC1 correction of a
// heteroskedasticity-robust regression variance). It is 0 for an exact
// design. Enumerated subsets add no sampling variance.
//
// Intervals are Wald intervals psi_j +- z_{1-alpha/2} se_j, and the
// p-value is the one-sided one of H0: psi_j <= 0 (optionally adjusted over
// the features, Holm or Benjamini-Hochberg). Like the
// leave-one-out VI of lazyvi, the intervals of null features can
// under-cover (the influence part degenerates at 0); the sampling part
// does not.
//
// # Cost
//
// Lazy fits each subset's reduced model from the full model's parameters:
// with a fixed penalty (lazy.Estimator{Lambda: 50}, as the paper's appendix
// has it) one kernel, one ridge solve (Krylov steps, or a Cholesky
// factorisation when those would cost more) and one forward pass per
// subset; the full model, its predictions and the intercept-only model are
// computed once and shared by every subset and by every estimator of a run.
// Subsets run on a bounded pool of workers; results do not depend on their
// number.
package shapley
