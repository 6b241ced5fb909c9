// Command mlpplugin is an external backend plugin for vi's tests and an
// example of one: any executable whose main serves a framework.Backend with
// backendplugin.Serve can be named with "vi estimate --plugin PATH".
package main

import (
	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/backends/mlp"
)

func main() {
	backendplugin.Serve(mlp.Backend{})
}
