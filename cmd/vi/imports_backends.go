package main

// The baseline backends register themselves.
import (
	_ "github.com/lazyvi/lazyvi/backends/forest"
	_ "github.com/lazyvi/lazyvi/backends/linear"
)
