package main

// The built-in backends, estimators and measures register themselves.
import (
	_ "github.com/lazyvi/lazyvi/backends/mlp"
	_ "github.com/lazyvi/lazyvi/estimators"
	_ "github.com/lazyvi/lazyvi/measures"
)
