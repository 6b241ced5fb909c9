// Package mlp is lazyvi's built-in backend: fully connected ReLU networks
// on gonum (one output, or K for a K-class response), with the gradients
// and the structured neural tangent kernel the lazy estimator needs and the
// warm starts of lazy-es. Importing it (blank import is
// enough) registers the backend as "mlp"; Backend and NewModel use it without
// the registry.
//
// # Network
//
// With hidden widths h_1..h_L (option hidden, default one layer of 50; vi
// chooses among a few by default, its --hidden auto) and
// p inputs, the raw output is
//
//	net(x) = W_{L+1} relu(W_L ... relu(W_1 x + b_1) ... + b_L) + b_{L+1}
//
// where W_{L+1} (1 x h_L, K x h_L for multiclass) and b_{L+1} are the
// final weights v and bias c. The prediction is
//
//   - regression: mu + sd*net(x), where mu and sd are the mean and the
//     (population) standard deviation of the training responses, computed by
//     Fit (sd = 1 if the responses are constant). Training on the
//     standardised response makes the Adam learning rate independent of the
//     response's units. mu and sd are constants, not parameters.
//   - binary: sigmoid(net(x)) = P(Y = 1).
//   - multiclass: softmax(net(x)), the K class probabilities.
//
// # Parameter order
//
// The flat parameter vector theta (length NumParams, M) holds the layers in
// order from the input side; each layer contributes its weights W_l
// (out x in, row-major: entry (o, i) at offset o*in + i) and then its bias
// b_l (out). The last layer is v (1 x h_L) then c. For one hidden layer of m
// units: W (m*p), b (m), v (m), c (1), so M = m*p + 2m + 1.
//
// Gradients (Jacobian, Kernel, JacobianTVec) are those of the prediction:
// sd times the gradient of net for regression, p(1-p) times the gradient of
// the logit for binary, and for multiclass those of the K probabilities
// (the softmax Jacobian times the outputs' gradients; row i*K + k of the
// Jacobian for class k of sample i, as framework.Gradienter says).
//
// # Training
//
// Fit uses PyTorch's nn.Linear default initialisation (weights and biases
// uniform on ±1/sqrt(fan_in)) and Adam (betas 0.9/0.999, eps 1e-8, option lr,
// default 1e-3) on minibatches (option batch, default 64) of the mean loss:
// squared error on the standardised response for regression, log-loss for
// binary, softmax cross-entropy for multiclass. Rows are reshuffled every epoch. All randomness comes from one
// math/rand/v2 PCG generator seeded with ModelSpec.Seed, so the same seed
// and data give bit-identical parameters.
//
// Fit holds out a validation slice of the training rows (option valid,
// default 20%, drawn with its own generator seeded by ModelSpec.Seed, so
// that a retrained model and every candidate of vi's --hidden auto hold out
// the same rows; none below 20 rows) and trains on the rest. After every
// epoch it computes the loss on the slice. It stops when that loss has not
// fallen below (1 - tol) times the best so far for patience (20)
// consecutive epochs, or after epochs (2000) epochs, and keeps the
// parameters of the epoch with the lowest validation loss. FitReport says
// which ended training ("patience" or "cap"), after how many epochs, and
// the validation loss kept. With valid=0 it watches the full training loss
// instead.
//
// Early stopping watches a validation slice rather than the training
// loss because the training loss of minibatch training plateaus on its own
// noise, or runs to the cap on high-dimensional data, well before the
// network stops improving on data it has not seen.
//
// # Concurrency
//
// Fit must complete before any other method is called. After that the model
// is read-only: Predict, PredictShifted, Jacobian, Kernel, JacobianTVec
// and WarmStart (which returns a new model, training it from this one's
// parameters) may be called from any number of goroutines at once; each call allocates
// its own buffers. Inputs given as *mat.Dense are read in place, never
// modified.
package mlp
