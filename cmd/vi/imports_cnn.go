package main

// The convolutional backend and the early-stopping estimator register
// themselves.
import (
	_ "github.com/lazyvi/lazyvi/backends/cnn"
)
