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
// is framework.Capable: framework.AsGradienter, AsKerneler, AsWarmStarter
// (and AsGrammer, AsShiftBatcher) find them as far as the backend's
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
//
// Raw values. A plugin built with this package advertises raw_values, and
// this package's client asks for raw answers when it creates a model
// (NewModelRequest.raw_answers): between them the values of every matrix
// and vector travel as raw little-endian bytes (Matrix.data_raw,
// Vector.data_raw), the same bits that protobuf-go would otherwise encode
// and decode one value at a time, and the receiver reads them in place. A
// plugin or a client from before gets and sends packed values as always.
//
// Same bits as in process. A request matrix also carries where its rows lie
// within 64-byte lines (Matrix.layout), and the plugin unpacks it with its
// rows at those offsets, so that the model computes on the layout it would
// see in lazyvi's process: BLAS kernels pick their summation order by the
// alignment of their operands (OpenBLAS's on CPUs without AVX, for one),
// and a view sent as contiguous rows gave other bits behind the plugin. See
// layout.go for what this assumes of the BLAS. A plugin from before ignores
// the field; a client from before sends none and gets the contiguous
// unpacking.
//
// Matrix cache. The estimators call a model many times with the same input
// (lazy sends the same fold rows with every candidate penalty, only small
// vectors changing), so the plugin keeps recent input matrices and the
// client sends a matrix it has sent before as a key alone. A plugin built
// with this package advertises it (matrix_cache in its capabilities) and
// keeps the matrices sent with a key in an LRU cache of 64 MiB. The client
// keys the matrix arguments of Predict, Jacobian, PredictShifted, Kernel,
// JacobianTVec, PredictShifts and Gram that have at least 4096 values
// (smaller ones are cheaper to send than to hash; Fit and WarmStart send
// theirs once): the key is the matrix's shape and layout and a 128-bit
// hash of its values (two hash/maphash hashes under seeds fixed for the
// process), so a matrix changed in place gets a new key. Once a call that carried a matrix's data
// has succeeded, later calls send its key without the data. A plugin that
// no longer holds the key (evicted) answers FailedPrecondition
// "backendplugin: matrix cache miss" without calling the model, and the
// client forgets the key and sends the call once more with the data;
// callers see neither. The cached matrices are handed to the model's
// methods as they are, so a backend must not modify its input matrices (in
// process it gets the estimators' matrices, which they reuse too).
//
// Work next to the model. Besides the framework's interfaces, the plugin
// serves what lazy needs in bulk, so that only small answers cross: Gram
// (G = Phi^T Phi as its upper triangle and Phi^T e, from the model's
// framework.Grammer or its Jacobian; capability gram), PredictShifts
// (shifted predictions in a batch, the dual form theta + Phi(x)^T a formed
// in the plugin; capability shift_batch), and symmetric kernels as their
// upper triangle to a client that allows it (KernelRequest.allow_upper,
// Matrix.upper). The client's models implement framework.Grammer and
// framework.ShiftBatcher whatever the plugin: with a plugin built before
// these additions they fall back to the Jacobian and to one call per shift,
// and a plugin serves a client that does not know them as before. All are
// optional fields and methods under the same ProtocolVersion.
//
// Single-precision products. A plugin whose backend declares
// framework.Capabilities.SinglePrecision advertises single_precision, and
// the client's model is then a framework.SinglePrecisioner whose products
// set JacobianProductRequest.single; the plugin answers them with its
// model's single-precision products. A plugin from before neither
// advertises the capability nor knows the field (the client's model is
// then not a SinglePrecisioner), and a client from before never sets it.
// Likewise single-precision kernels: a plugin whose backend declares
// framework.Capabilities.SingleKernel advertises single_kernel, the
// client's model is then a framework.SingleKerneler whose Kernel and
// JacobianTVec set KernelRequest.single and JacobianTVecRequest.single,
// and a dual-form framework.Shift with Single set travels with
// Shift.single; the plugin answers them with its model's SingleKernel. To
// a plugin that does not advertise it the client sends none of them (a
// shift with Single is then computed in double precision, which meets
// single's accuracy).
//
// Prepared predictions. The client's model is a
// framework.PreparedPredictor whenever it has Jacobian products: its
// PredictPrepared is Predict with MatrixRequest.prepared set, and the
// plugin answers with its model's PredictPrepared when the model is one
// (keeping what the products on the same rows need), else with Predict.
// The predictions are the same either way, so a plugin from before, which
// does not know the field, serves it as Predict.
package backendplugin
