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
	"google.golang.org/grpc/test/bufconn"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/internal/pb"
)

// Pipe serves b in this process over an in-memory gRPC connection, with the
// same server, protocol and message limits as a plugin process, and returns
// the backend as lazyvi sees a plugin's: the same client model types
// (matched to the capabilities), wire encoding and error mapping as Open
// gives, without a subprocess or the go-plugin handshake. It is meant for
// tests: framework/frameworktest runs its conformance checks through it.
// stop closes the connection and the server; it is safe to call more than
// once. Options apply as for Open (WithHangTimeout; WithStderr is unused).
func Pipe(name string, b framework.Backend, opts ...Option) (remote framework.Backend, stop func(), err error) {
	lis := bufconn.Listen(1 << 20)
	s := newGRPCServer(nil)
	pb.RegisterBackendServer(s, newServer(b))
	hs := health.NewServer()
	hs.SetServingStatus(plugin.GRPCServiceName, grpc_health_v1.HealthCheckResponse_SERVING)
	grpc_health_v1.RegisterHealthServer(s, hs)
	go func() { _ = s.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///pipe",
		append(dialOptions(),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
			grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		s.Stop()
		return nil, nil, &Error{Backend: name, Op: "start", Err: err}
	}
	o := &options{hangTimeout: DefaultHangTimeout}
	for _, opt := range opts {
		opt(o)
	}
	r, err := newRemote(context.Background(), name, conn, o, nil, nil)
	if err != nil {
		_ = conn.Close()
		s.Stop()
		return nil, nil, err
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			r.shutdown()
			_ = conn.Close()
			s.Stop()
		})
	}
	return r, stop, nil
}
