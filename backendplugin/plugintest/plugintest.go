// Package plugintest checks a lazyvi backend behind the plugin transport:
// the backend is served in this process by backendplugin.NewServer and
// reached through backendplugin.Connect over an in-memory connection (the
// same server, client, encoding and error mapping as a plugin process,
// without the process or the go-plugin handshake), and the conformance kit
// runs on what arrives.
//
//	func TestPlugin(t *testing.T) {
//		plugintest.TestBackend(t, mybackend.Backend{},
//			frameworktest.WithOptions(map[string]string{"epochs": "20"}))
//	}
//
// For a backend that runs in another process already (a plugin written in
// another language), run frameworktest.TestBackend on the backend that
// backendplugin.Open returns.
package plugintest

import (
	"context"

	"google.golang.org/grpc/test/bufconn"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

// TestBackend serves b over the plugin transport in memory and checks, as
// subtests, that the served backend is equivalent to b
// (frameworktest.TestEquivalent: capabilities, options, bit-identical
// predictions) and passes the conformance kit (frameworktest.TestBackend)
// with every capability it declares.
// t is a *testing.T, or any frameworktest.TB.
func TestBackend[T frameworktest.TB[T]](t T, b framework.Backend, opts ...frameworktest.Option) {
	t.Helper()
	remote, stop, err := Serve("plugintest", b)
	if err != nil {
		t.Fatalf("serve the backend over the plugin transport: %v", err)
	}
	t.Cleanup(stop)
	t.Run("Equivalent", func(t T) { frameworktest.TestEquivalent(t, b, remote, opts...) })
	t.Run("Conformance", func(t T) { frameworktest.TestBackend(t, remote, opts...) })
}

// Serve serves b in this process over an in-memory connection with the
// plugin transport's server and client, and returns the backend as lazyvi
// sees it through a plugin; stop closes the connection and the server.
// name names the backend in errors.
func Serve(name string, b framework.Backend) (remote framework.Backend, stop func(), err error) {
	lis := bufconn.Listen(1 << 20)
	s := backendplugin.NewServer(b)
	go func() { _ = s.Serve(lis) }()
	remote, closeConn, err := backendplugin.Connect(context.Background(), name, lis.DialContext)
	if err != nil {
		s.Stop()
		return nil, nil, err
	}
	return remote, func() { closeConn(); s.Stop() }, nil
}
