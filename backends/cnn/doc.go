// Package cnn is a small convolutional network backend on gonum, for image
// features: conv k x k -> ReLU -> pooling -> dense ReLU layers -> output,
// with gradients (a framework.Gradienter) and warm starts (a
// framework.WarmStarter). Importing it registers the backend as "cnn".
//
// # Input
//
// The features are the pixels of one grey image of H x W in row-major
// order (column j is pixel (j / W, j % W)), as in digits.csv's px_r_c;
// option image ("8x8", or --image 8x8 on the command line) gives the shape,
// and a square image of Inputs pixels is the default. The framework
// standardises every column, so a dropped pixel (its train mean) is 0.
//
// # Network
//
//	conv:  F filters (option filters, default 16) of k x k (option kernel,
//	       default 3), stride 1, zero padding k/2 (the output is H x W)
//	relu
//	pool:  p x p windows with stride p (option pool, default 2; pool_kind
//	       max, the default, or avg); a remainder row or column is dropped
//	dense: ReLU layers of widths hidden (default "64") on the flattened
//	       (H/p) x (W/p) x F features, then the output layer
//
// The convolution is im2col (a gather through a precomputed index table
// into an (n H W) x (k k) patch matrix) followed by one matrix product with
// the F x (k k) filter matrix; backpropagation is the transposed products.
// The output is as in the mlp backend: mu + sd*net(x) for regression (mu,
// sd the training response's mean and standard deviation), sigmoid for
// binary, softmax over K outputs for multiclass.
//
// # Parameters
//
// theta holds the filters (F x k*k, row-major: filter c's weight at kernel
// offset (a, b) at c*k*k + a*k + b), their biases (F), then each dense
// layer's weights (out x in, row-major; input index q*F + c for pooled
// position q = row*(W/p) + col and filter c) and biases.
//
// Gradients are those of the prediction (for multiclass, K Jacobian rows
// per sample, one per class probability). There is no structured kernel,
// but the products with the Jacobian and its transpose are matrix-free (a
// framework.JacobianMultiplier: forward mode through the layers for
// Phi v, one backward pass for Phi^T u, on blocks of samples, each sample
// once whatever K), so lazy at scale solves with Krylov steps instead of
// forming the (n K) x M Jacobian (M is about 17,000 with the defaults on
// 8x8 images).
//
// # Training
//
// As mlp: PyTorch's default initialisation (uniform on ±1/sqrt(fan_in)),
// Adam (lr 2e-3) on minibatches of 32, at most 500 epochs, stopping when
// the loss on the validation slice (option valid, 20% of the training
// rows, as mlp holds it out) has not improved by tol (1e-4) relative for
// patience (5) epochs, keeping the best epoch's parameters; one PCG
// generator seeded with ModelSpec.Seed, so runs are bit-identical.
//
// WarmStart continues from the fitted parameters for a number of Adam
// steps (lazy-es asks for 200 by default), Adam resuming from the
// second-moment estimates Fit ended with.
//
// # Concurrency
//
// After Fit, every method may be called concurrently; each call allocates
// its own buffers (the Jacobian products share the memo's forward passes,
// which are never written once stored).
package cnn
