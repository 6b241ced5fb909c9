// Package nn is the training machinery that lazyvi's neural-network
// backends (backends/mlp and backends/cnn) share, so that each backend holds
// only its architecture: the forward pass, backpropagation, the parameter
// layout and the structured gradients built on them.
//
// It holds
//
//   - Head: the output layer's task semantics. The link from raw outputs to
//     predictions (mu + sd*z for regression, sigmoid for binary, softmax for
//     multiclass), the training loss (squared error on the standardised
//     response, log-loss, softmax cross-entropy) and its gradient, the
//     response checks and standardisation, and the softmax Jacobian rows
//     that gradients of multiclass predictions backpropagate.
//   - Adam: PyTorch's Adam without weight decay (betas 0.9/0.999, eps 1e-8).
//   - Trainer: minibatch Adam on one training set, rows reshuffled at the
//     start of every pass by a caller's generator; Fit's epoch loop with
//     early stopping (patience, relative tol) that keeps the best epoch's
//     parameters, and WarmStart's continuation for a number of steps.
//   - Training and its options: the training options every backend
//     has (epochs, patience, tol, lr, batch), parsed with the same checks
//     and usage errors, in sorted key order.
//   - Small numeric functions: Sigmoid, Softmax, ColSums, InitUniform.
//
// Every function does its floating-point work in one fixed order, the
// same for every backend, so a seed gives the same parameters bit for bit.
// Messages are prefixed with the backend's name, which callers pass in.
package nn
