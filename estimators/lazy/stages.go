package lazy

// The steps of a reduction that lazy reports to the run's
// timing.Stages (vi bench's table of where the time goes), with the
// flops it counts for them.
const (
	// stageResiduals: the full model's predictions on the train rows,
	// counted as a forward pass (2 M flops a row).
	stageResiduals = "residuals"
	// stageKernel: the kernel or Gram of the rows the penalty is chosen
	// on, or of all the train rows for a dense solve at scale: n M^2 flops
	// for the primal Gram, n^2 M for the Jacobian's kernel; a backend's
	// structured kernel is not counted.
	stageKernel = "kernel"
	// stageSearch: the penalty's cross-validation: the folds' Krylov
	// bases and the candidates' held-out predictions (a forward pass on
	// the held-out rows and, in the dual form, Phi_T^T a on the others).
	stageSearch = "search"
	// stageSolve: the update on all the train rows (Krylov steps, a
	// Cholesky factorization where they do not converge, or the
	// matrix-free solve's Jacobian products).
	stageSolve = "solve"
	// stagePredict: the reduced model's predictions on the evaluation
	// rows (a forward pass, and Phi^T a in the dual form).
	stagePredict = "predict"
)

// passFlops is the flops counted for a pass through a network of m
// parameters on rows rows: 2 m a row, a dense layer's multiply-add per
// weight.
func passFlops(rows, m int) float64 { return 2 * float64(rows) * float64(m) }
