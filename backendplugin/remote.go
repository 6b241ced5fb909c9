package backendplugin

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// remote is the framework.Backend on lazyvi's side of a plugin: what the
// plugin said it can do, fetched once, and New. Its calls go through the
// connection c, which owns their lifecycle.
type remote struct {
	c    *conn
	caps framework.Capabilities
	opts []framework.OptionInfo
	// shiftBatch: the plugin serves PredictShifts; older plugins get one
	// call per shift. gram: the plugin serves Gram; older ones send the
	// Jacobian.
	shiftBatch bool
	gram       bool
	// jacProducts: the plugin serves JacobianMul and JacobianTMul; with
	// older ones the products come from the Jacobian.
	jacProducts bool
}

// newRemote asks the plugin behind cc for its capabilities and options,
// with the watchdog running.
func newRemote(ctx context.Context, name string, cc grpc.ClientConnInterface, o *options, exited func() error, kill func()) (*remote, error) {
	r := &remote{c: newConn(name, cc, o, exited, kill)}
	var caps *pb.CapabilitiesResponse
	err := r.c.do(ctx, "Capabilities", func(ctx context.Context) (err error) {
		caps, err = r.c.rpc.Capabilities(ctx, &pb.Empty{})
		return err
	})
	if err != nil {
		r.c.shutdown()
		return nil, err
	}
	r.caps = framework.Capabilities{Gradients: caps.Gradients, Kernel: caps.Kernel, Classification: caps.Classification,
		Multiclass: caps.Multiclass, WarmStart: caps.WarmStart, Persist: caps.Persist,
		MatrixFree: caps.MatrixFree, SinglePrecision: caps.SinglePrecision && caps.JacobianProducts,
		SingleKernel: caps.SingleKernel}
	if caps.MatrixCache {
		r.c.known = newKnownKeys()
	}
	r.c.rawValues.Store(caps.RawValues)
	r.shiftBatch = caps.ShiftBatch
	r.gram = caps.Gram
	r.jacProducts = caps.JacobianProducts
	var opts *pb.OptionsResponse
	err = r.c.do(ctx, "Options", func(ctx context.Context) (err error) {
		opts, err = r.c.rpc.Options(ctx, &pb.Empty{})
		return err
	})
	if err != nil {
		r.c.shutdown()
		return nil, err
	}
	for _, o := range opts.Options {
		r.opts = append(r.opts, framework.OptionInfo{Name: o.Name, Default: o.DefaultValue, Usage: o.Usage})
	}
	return r, nil
}

func (r *remote) Capabilities() framework.Capabilities { return r.caps }

func (r *remote) Options() []framework.OptionInfo {
	return append([]framework.OptionInfo(nil), r.opts...)
}

// New creates the model in the plugin process. The client model has every
// method of the framework's optional interfaces and is framework.Capable:
// find them with framework.AsGradienter and its kin, which consult the
// backend's capabilities. Release it with framework.Release.
func (r *remote) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	var ref *pb.ModelRef
	err := r.c.do(ctx, "New", func(ctx context.Context) (err error) {
		ref, err = r.c.rpc.NewModel(ctx, &pb.NewModelRequest{
			Task:    int32(spec.Task),
			Inputs:  int64(spec.Inputs),
			Seed:    spec.Seed,
			Options: spec.Options,
			Classes: int64(spec.Classes),
			// This client reads raw values in any answer (rawSender).
			RawAnswers: true,
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return &model{r: r, c: r.c, id: ref.ModelId}, nil
}

var _ framework.Backend = (*remote)(nil)

var errNoConn = errors.New("dispensed plugin is not a gRPC connection")
