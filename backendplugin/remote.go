package backendplugin

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// remote is the framework.Backend on lazyvi's side of a plugin: what the
// plugin said it is, fetched once, and New. Its calls go through the
// connection c, which owns their lifecycle.
type remote struct {
	c    *conn
	caps framework.Capabilities
	opts []framework.OptionInfo
}

// newRemote asks the plugin behind cc to describe its backend, with the
// watchdog running.
func newRemote(ctx context.Context, name string, cc grpc.ClientConnInterface, o *options, exited func() error, kill func()) (*remote, error) {
	r := &remote{c: newConn(name, cc, o, exited, kill)}
	var d *pb.DescribeResponse
	err := r.c.do(ctx, "Describe", func(ctx context.Context) (err error) {
		d, err = r.c.rpc.Describe(ctx, &pb.DescribeRequest{})
		return err
	})
	if err != nil {
		r.c.shutdown()
		return nil, err
	}
	r.caps = capsFromPB(d.GetCapabilities())
	for _, o := range d.Options {
		r.opts = append(r.opts, framework.OptionInfo{Name: o.Name, Default: o.DefaultValue, Usage: o.Usage})
	}
	return r, nil
}

func capsToPB(c framework.Capabilities) *pb.Capabilities {
	return &pb.Capabilities{Gradients: c.Gradients, Kernel: c.Kernel, Classification: c.Classification,
		Multiclass: c.Multiclass, WarmStart: c.WarmStart, Persist: c.Persist, MatrixFree: c.MatrixFree,
		SinglePrecision: c.SinglePrecision, SingleKernel: c.SingleKernel, WarmStop: c.WarmStop}
}

func capsFromPB(c *pb.Capabilities) framework.Capabilities {
	return framework.Capabilities{Gradients: c.GetGradients(), Kernel: c.GetKernel(), Classification: c.GetClassification(),
		Multiclass: c.GetMulticlass(), WarmStart: c.GetWarmStart(), Persist: c.GetPersist(), MatrixFree: c.GetMatrixFree(),
		SinglePrecision: c.GetSinglePrecision(), SingleKernel: c.GetSingleKernel(), WarmStop: c.GetWarmStop()}
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
	req := &pb.NewModelRequest{
		Task:    int32(spec.Task),
		Inputs:  int64(spec.Inputs),
		Seed:    spec.Seed,
		Options: spec.Options,
		Classes: int64(spec.Classes),
	}
	if spec.Pretrained {
		req.Pretrained = &pb.Pretrained{}
	}
	var ref *pb.ModelRef
	err := r.c.do(ctx, "New", func(ctx context.Context) (err error) {
		ref, err = r.c.rpc.NewModel(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &model{r: r, c: r.c, id: ref.ModelId}, nil
}

var _ framework.Backend = (*remote)(nil)

var errNoConn = errors.New("dispensed plugin is not a gRPC connection")
