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
// lazyvi's side starts it and uses the backend like any other (NewServer
// and Connect serve and reach a backend over any other connection, as the
// conformance kit does in memory):
//
//	c, err := backendplugin.Open(ctx, "mybackend", exec.Command("./mybackend"))
//	if err != nil { ... }
//	defer c.Close()
//	b := c.Backend() // a framework.Backend
//
// The backend's Capabilities and Options are fetched once by Open. New
// creates the model in the plugin process; the returned client model, one
// type for every backend, has the methods of every optional interface and
// is framework.Capable: framework.As finds its Gradienter, Kerneler,
// WarmStarter (GramBuilder, ShiftBatcher, ...) as far as the backend's
// capabilities go. framework.Release frees the plugin's model.
// Methods may be called concurrently, on different models and on the same
// one; the plugin runs the calls concurrently too.
//
// Errors. Every error from the client is an *Error naming the backend and
// the step:
//
//	backend "mlp": New: unknown option "hiden"
//	backend "mlp": Fit: plugin process exited: signal: killed
//	backend "mlp": Predict: plugin not responding (no answer to health checks for 30s)
//	backend "./old-plugin": start: incompatible plugin: the plugin speaks backend protocol version 3, this lazyvi speaks version 2; rebuild ...
//
// A backend error wrapping framework.ErrUsage still matches it on lazyvi's
// side (it travels as gRPC InvalidArgument), and the context errors travel
// likewise; a context's cancellation reaches the plugin's model methods. A
// watchdog pings the plugin while calls are in flight; see WithHangTimeout.
//
// The protocol (proto/lazyvi/backend/v2/backend.proto, whose README says
// when its version changes) is versioned by ProtocolVersion, which
// go-plugin negotiates in the handshake: a plugin and lazyvi speak the same
// version or do not talk. It carries matrices and vectors as raw
// little-endian float64 bytes, which each side reads in place.
//
// Same bits as in process. A request matrix also carries where its rows lie
// within 64-byte lines (Matrix.layout), and the plugin unpacks it with its
// rows at those offsets, so that the model computes on the layout it would
// see in lazyvi's process: BLAS kernels pick their summation order by the
// alignment of their operands. See layout.go for what this assumes of the
// BLAS.
//
// Matrix handles. The estimators call a model many times with the same
// input (lazy sends the same fold rows with every Krylov product, only
// small vectors changing), so the client names each request matrix of at
// least 4096 values by a handle, keyed by its shape, layout and a 128-bit
// hash of its values: the first call sends the data under the handle, the
// plugin keeps it, and later calls send the handle alone. The client keeps
// the handles of 256 MiB of matrices, least recently used out, and releases
// the ones it drops; a matrix changed in place gets a new key and so a new
// handle. The kept matrices are handed to the model's methods as they are,
// so a backend must not modify its input matrices (in process it gets the
// estimators' matrices, which they reuse too).
//
// Work next to the model. Besides the framework's interfaces, the plugin
// serves what lazy needs in bulk, so that only small answers cross: Gram
// (G = Phi^T Phi as its upper triangle and Phi^T e, from the model's
// framework.GramBuilder or its Jacobian), PredictShifts (shifted predictions in
// a batch, the dual form theta + Phi(x)^T a formed in the plugin), Jacobian
// products (from the model's framework.JacobianMultiplier or its Jacobian),
// and symmetric kernels as their upper triangle. The client's models
// implement framework.GramBuilder, framework.ShiftBatcher and
// framework.PreparedPredictor whatever the backend.
//
// Single precision. A backend's SinglePrecision and SingleKernel
// capabilities make the client's models framework.SinglePrecisioner and
// framework.SingleKerneler; their calls ask the plugin for single
// precision (CallOptions.precision), and the plugin answers with the
// model's single-precision products.
//
// Pretrained models. A framework.ModelSpec with Pretrained set travels as
// NewModelRequest.pretrained: the backend loads the full model's fitted
// state from what its options name instead of training it, and says so in
// its FitReport (Loaded, Architecture).
package backendplugin
