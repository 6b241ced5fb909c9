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
//
// # Subset sampling
//
// psi is also the solution of the constrained weighted least squares
// (Charnes et al. 1988)
//
//	minimise sum_{0<|S|<p} w(S) (v(S) - v({}) - z_S^T psi)^2  s.t.  1^T psi = v([p]) - v({})
//
// with z_S the indicator of S and the Shapley kernel w(S) = (p-1) /
// (C(p,|S|) |S| (p-|S|)), which is proportional to C(p-2,|S|-1)^-1 per
// subset. SPVIM replaces the sum over all 2^p - 2 subsets by Gamma i.i.d.
// draws from the distribution P(S) proportional to w(S), each with weight
// 1/Gamma (duplicates merged with their counts). Per subset this is
// KernelWeight; the size |S| = s then has probability proportional to
// C(p,s) C(p-2,s-1)^-1 = p(p-1)/(s(p-s)), so Sample draws s with probability
// proportional to 1/(s(p-s)) and then a uniform subset of size s
// (SizeProbs). The R package vimp instead draws s with probability
// proportional to C(p-2,s-1)^-1 and then a uniform subset, which gives a
// subset probability proportional to C(p-2,s-1)^-1 C(p,s)^-1: the kernel
// only for p <= 3 (for p = 4, sizes 1,2,3 get 0.4, 0.2, 0.4 instead of
// 4/11, 3/11, 4/11), so its weighted least squares is not centred on the
// Shapley values for p >= 4. The default Gamma is ceil(2 p ln p), at least
// 100 (DefaultSubsets); when 2^p - 2 <= Gamma every subset is enumerated with
// weight w(S) instead, and the values are exact for the estimated v.
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
//	se_j^2 = Var_i(phi_j(Z_i)) / n2 + Var_k(zeta_j(S_k)) / Gamma
//
// phi_j is the influence function from estimating V on the n2 evaluation
// samples: phi_j = sum_S dpsi_j/dv(S) IF_S, the sum including v({}) and
// v([p]), with IF_S the measure's influence function
// (framework.Score.Influence) of the reduced model on S. The coefficients
// are those of the constrained solution above (vimp differentiates the
// unconstrained least squares instead); the sample variance uses the divisor
// n2 - 1, as framework.Estimate does.
//
// zeta(S_k) = B z_k (v(S_k) - v({}) - z_k^T psi), one per draw, is the
// first-order effect of a draw on psi (vimp's contrib_s); its sample
// variance over the Gamma draws, divided by Gamma, is the subset-sampling
// variance, here multiplied by Gamma/(Gamma - (p-1)): the residuals
// v(S_k) - v({}) - z_k^T psi are in-sample, from a fit with p - 1 free
// coefficients, so their spread is too small by that factor (the HC1
// correction of a heteroskedasticity-robust regression variance; vimp omits
// it, which matters when Gamma is not much larger than p: 1.11 for p = 100
// and the default 922 draws). It is 0 under exact enumeration.
//
// Intervals are Wald intervals psi_j +- z_{1-alpha/2} se_j. Like the
// leave-one-out VI of lazyvi, the intervals of null features can
// under-cover (the influence part degenerates at 0); the sampling part
// does not.
//
// # Cost
//
// Lazy fits each subset's reduced model from the full model's parameters:
// with a fixed penalty (estimators.Lazy{Lambda: 50}, as the paper's appendix
// has it) one kernel, one ridge solve (Krylov steps, or a Cholesky
// factorisation when those would cost more) and one forward pass per
// subset; the full model, its predictions and the intercept-only model are
// computed once and shared by every subset and by every estimator of a run.
// Subsets run on a bounded pool of workers; results do not depend on their
// number.
package shapley
