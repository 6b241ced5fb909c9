package backendplugin

import (
	"context"
	"math"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/experimental"

	"github.com/lazyvi/lazyvi/framework"
	pb "github.com/lazyvi/lazyvi/proto/lazyvi/backend/v2"
)

// ProtocolVersion is the version of the backend plugin protocol spoken by
// this package, that of proto/lazyvi/backend/v2/backend.proto (its package
// lazyvi.backend.vN names it). A plugin and lazyvi must speak the same
// version; go-plugin negotiates it in the handshake and Open refuses a
// plugin that offers only other versions.
var ProtocolVersion = pb.Version()

// Handshake is the go-plugin handshake shared by lazyvi and its backend
// plugins. The magic cookie is not a security measure: it makes a plugin
// binary run by hand say that it is a plugin instead of hanging.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  uint(ProtocolVersion),
	MagicCookieKey:   "LAZYVI_BACKEND_PLUGIN",
	MagicCookieValue: "d9c1c5c2-0f4e-4d55-9a3e-lazyvi-backend",
}

// pluginName is the key of the one plugin in the plugin set.
const pluginName = "backend"

// maxMsgSize bounds one gRPC message both ways: the largest size gRPC allows
// (2 GiB - 1), e.g. a 16000 x 16000 kernel. go-plugin's default server keeps
// gRPC's 4 MiB limit, which a 10000 x 100 matrix already exceeds.
const maxMsgSize = math.MaxInt32

// windowSize and ioBufferSize: HTTP/2 flow-control windows and socket
// buffers large enough that a message of lazy's usual sizes goes in one
// write and needs no window update.
const (
	windowSize   = 16 << 20
	ioBufferSize = 1 << 20
)

// newGRPCServer is the ServeConfig.GRPCServer of Serve.
func newGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(maxMsgSize), grpc.MaxSendMsgSize(maxMsgSize), experimental.BufferPool(bufferPool))
	opts = append(opts, serverCodecOptions()...)
	opts = append(opts, grpc.InitialWindowSize(windowSize), grpc.InitialConnWindowSize(windowSize),
		grpc.WriteBufferSize(ioBufferSize), grpc.ReadBufferSize(ioBufferSize))
	return grpc.NewServer(opts...)
}

// dialOptions raise the client's limits to match the server's and use the
// same codec and buffer pool (codec.go).
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(append(clientCodecOptions(),
		grpc.MaxCallRecvMsgSize(maxMsgSize),
		grpc.MaxCallSendMsgSize(maxMsgSize),
	)...), experimental.WithBufferPool(bufferPool),
		grpc.WithInitialWindowSize(windowSize), grpc.WithInitialConnWindowSize(windowSize),
		grpc.WithWriteBufferSize(ioBufferSize), grpc.WithReadBufferSize(ioBufferSize)}
}

// backendPlugin is the go-plugin glue. On the plugin side impl is the
// backend served; on lazyvi's side GRPCClient hands back the connection and
// Open builds the remote backend on it.
type backendPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl framework.Backend
}

func (p *backendPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterBackendServer(s, newServer(p.impl))
	return nil
}

func (p *backendPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return conn, nil
}

// Serve serves b as a backend plugin over gRPC and returns when lazyvi
// closes the plugin; it is what a plugin's main calls. Run by hand (without
// the handshake cookie in its environment) it says it is a plugin and exits
// with status 1.
//
// A plugin serving with Serve exits when the process that started it is
// gone (lazyvi killed with SIGKILL, say), within a second; on Linux lazyvi
// also has the kernel kill it at once (whatever its language).
//
// Nothing may write to stdout before Serve: go-plugin's handshake line is
// the first thing lazyvi reads there. After Serve starts, the plugin's
// os.Stdout and os.Stderr are forwarded to lazyvi's stderr. Log only to
// stderr.
func Serve(b framework.Backend) { serve(b, ProtocolVersion) }

func serve(b framework.Backend, version int) {
	stop := make(chan struct{})
	defer close(stop)
	go watchParent(os.Getppid(), os.Getppid, parentPoll, stop, exitOrphaned)
	hs := Handshake
	hs.ProtocolVersion = uint(version)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         plugin.PluginSet{pluginName: &backendPlugin{impl: b}},
		GRPCServer:      newGRPCServer,
		// go-plugin's own log, warnings and errors only; lazyvi passes
		// the plugin's stderr through as it is.
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:   "lazyvi-plugin",
			Level:  hclog.Warn,
			Output: os.Stderr,
		}),
	})
}
