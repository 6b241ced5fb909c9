package backendplugin_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/backends/linear"
	"github.com/lazyvi/lazyvi/framework/frameworktest"
)

// serveOn serves the linear backend with NewServer on network and returns
// its handshake line.
func serveOn(t *testing.T, network string) string {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "backend.sock")
	}
	lis, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	s := backendplugin.NewServer(linear.Backend{})
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return fmt.Sprintf("1|%d|%s|%s|grpc", backendplugin.ProtocolVersion, network, lis.Addr().String())
}

// A backend served by a running process is reached from its handshake
// line, on a Unix socket and on TCP, and passes the conformance kit;
// stopping the client leaves the server serving.
func TestAttach(t *testing.T) {
	for _, network := range []string{"unix", "tcp"} {
		t.Run(network, func(t *testing.T) {
			line := serveOn(t, network)
			b, stop, err := backendplugin.Attach(context.Background(), "linear", line)
			if err != nil {
				t.Fatal(err)
			}
			frameworktest.TestBackend(t, b)
			stop()
			b2, stop2, err := backendplugin.Attach(context.Background(), "linear", line)
			if err != nil {
				t.Fatalf("attach again after stop: %v", err)
			}
			defer stop2()
			if !b2.Capabilities().Gradients {
				t.Error("attached again: no gradients")
			}
		})
	}
}

func TestAttachRefuses(t *testing.T) {
	v := backendplugin.ProtocolVersion
	sock := filepath.Join(t.TempDir(), "none.sock")
	for _, c := range []struct {
		line, want   string
		incompatible bool
	}{
		{fmt.Sprintf("1|%d|tcp|127.0.0.1:1|grpc", v+1), fmt.Sprintf("speaks backend protocol version %d, this lazyvi speaks version %d", v+1, v), true},
		{fmt.Sprintf("2|%d|tcp|127.0.0.1:1|grpc", v), "core protocol version 2", true},
		{fmt.Sprintf("1|%d|tcp|127.0.0.1:1|netrpc", v), "protocol netrpc, want grpc", true},
		{fmt.Sprintf("1|%d|udp|127.0.0.1:1|grpc", v), "network udp", true},
		{"127.0.0.1:1", "want CORE|APP|NETWORK|ADDR|grpc", true},
		{fmt.Sprintf("1|%d|unix|%s|grpc", v, sock), "attach: unix " + sock, false},
	} {
		_, _, err := backendplugin.Attach(context.Background(), "mine", c.line, backendplugin.WithHangTimeout(0))
		var e *backendplugin.Error
		if err == nil || !errors.As(err, &e) || e.Op != "attach" || !strings.Contains(err.Error(), c.want) ||
			errors.Is(err, backendplugin.ErrIncompatible) != c.incompatible {
			t.Errorf("Attach(%q): %v; want an *Error of step attach with %q (incompatible %v)", c.line, err, c.want, c.incompatible)
		}
	}
}
