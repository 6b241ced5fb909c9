// Package backendplugin runs a lazyvi backend (framework.Backend) in its
// own process, as a github.com/hashicorp/go-plugin plugin speaking gRPC.
//
// A plugin is a program whose main serves one backend:
//
//	package main
//
//	import (
//		"github.com/lazyvi/lazyvi/backendplugin"
//		"example.com/mybackend"
//	)
//
//	func main() {
//		backendplugin.Serve(mybackend.New())
//	}
//
// It must write nothing to stdout before Serve (the handshake line goes
// there) and log only to stderr. Run by hand, it says it is a plugin and
// exits.
//
// lazyvi's side starts it and uses the backend like any other:
//
//	c, err := backendplugin.Open(ctx, "mybackend", exec.Command("./mybackend"))
//	if err != nil { ... }
//	defer c.Close()
//	b := c.Backend() // a framework.Backend
//
// The backend's Capabilities and Options are fetched once by Open. New
// creates the model in the plugin process; the returned client model
// implements framework.Gradienter and framework.Kerneler exactly when the
// capabilities say so, and framework.Release frees the plugin's model.
// Methods may be called concurrently, on different models and on the same
// one; the plugin runs the calls concurrently too.
//
// Errors. Every error from the client is an *Error naming the backend and
// the step:
//
//	backend "mlp": New: unknown option "hiden"
//	backend "mlp": Fit: plugin process exited: signal: killed
//	backend "mlp": Predict: plugin not responding (no answer to health checks for 30s)
//	backend "./old-plugin": start: incompatible plugin: the plugin speaks backend protocol version 2, this lazyvi speaks version 1; rebuild ...
//
// A backend error wrapping framework.ErrUsage still matches it on lazyvi's
// side (it travels as gRPC InvalidArgument), and the context errors travel
// likewise; a context's cancellation reaches the plugin's model methods. A
// watchdog pings the plugin while calls are in flight; see WithHangTimeout.
//
// The protocol (internal/pb) carries matrices as rows, cols and one packed
// repeated double field, row-major. It is versioned by ProtocolVersion,
// which go-plugin negotiates in the handshake.
package backendplugin
