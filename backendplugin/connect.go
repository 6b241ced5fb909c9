package backendplugin

import (
	"context"
	"net"
	"sync"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// NewServer returns a gRPC server that serves b as a plugin process does:
// the same backend service (with its kept matrices), a health service for
// the client's watchdog, and the same message limits and codec. Serve it on
// any listener and reach it with Connect; Serve is this server behind
// go-plugin's handshake. framework/frameworktest serves the backends it
// checks this way, over an in-memory listener.
func NewServer(b framework.Backend) *grpc.Server { return newServerWith(newServer(b), nil) }

// newServerWith is NewServer serving srv (a *server, or a wrapper of one)
// with the extra gRPC server options sopts.
func newServerWith(srv pb.BackendServer, sopts []grpc.ServerOption) *grpc.Server {
	s := newGRPCServer(sopts)
	pb.RegisterBackendServer(s, srv)
	hs := health.NewServer()
	hs.SetServingStatus(plugin.GRPCServiceName, grpc_health_v1.HealthCheckResponse_SERVING)
	grpc_health_v1.RegisterHealthServer(s, hs)
	return s
}

// Connect returns the backend that a NewServer serves at the other end of
// the connections dial opens, as lazyvi sees a plugin's (the same client
// models, wire encoding, error mapping and watchdog as Open gives, without a
// process or the go-plugin handshake), and stop, which fails the calls in
// flight with ErrClosed and closes the connection (not the server); stop is
// safe to call more than once. ctx bounds the first calls (capabilities and
// options). Options apply as for Open (WithStderr is unused).
func Connect(ctx context.Context, name string, dial func(context.Context) (net.Conn, error), opts ...Option) (b framework.Backend, stop func(), err error) {
	r, stop, err := connect(ctx, name, dial, opts...)
	if err != nil {
		return nil, nil, err
	}
	return r, stop, nil
}

func connect(ctx context.Context, name string, dial func(context.Context) (net.Conn, error), opts ...Option) (*remote, func(), error) {
	cc, err := grpc.NewClient("passthrough:///"+name,
		append(dialOptions(),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		return nil, nil, &Error{Backend: name, Op: "start", Err: err}
	}
	o := &options{hangTimeout: DefaultHangTimeout}
	for _, opt := range opts {
		opt(o)
	}
	r, err := newRemote(ctx, name, cc, o, nil, nil)
	if err != nil {
		_ = cc.Close()
		return nil, nil, err
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			r.c.shutdown()
			_ = cc.Close()
		})
	}
	return r, stop, nil
}
