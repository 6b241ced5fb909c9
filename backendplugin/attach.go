package backendplugin

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// Attach reaches a backend that a running process already serves, instead
// of starting a plugin process: a Python process serving the network in its
// memory (lazyvi_plugin.Server), say. handshake is the line a plugin would
// print at start-up, "CORE|APP|NETWORK|ADDR|grpc" (go-plugin's format: core
// version 1, APP this package's ProtocolVersion, NETWORK unix or tcp), so
// that the server's protocol version is checked as a started plugin's is:
// another version fails with an *Error wrapping ErrIncompatible.
//
// The backend is the one Connect returns: the same client models, encoding,
// error mapping and watchdog as Open's (a server that stops answering
// health checks fails the calls in flight with ErrNotResponding). stop
// closes the connection and fails the calls in flight with ErrClosed; it
// never ends the serving process, which is not lazyvi's. ctx bounds the
// first calls (capabilities and options). Every error is an *Error naming
// the backend and the step "attach".
func Attach(ctx context.Context, name, handshake string, opts ...Option) (b framework.Backend, stop func(), err error) {
	network, addr, err := parseHandshake(handshake)
	if err != nil {
		return nil, nil, &Error{Backend: name, Op: "attach", Err: err}
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	r, stop, err := connect(ctx, name, dial, opts...)
	if err != nil {
		return nil, nil, &Error{Backend: name, Op: "attach", Err: fmt.Errorf("%s %s: %w", network, addr, unwrapOp(err))}
	}
	return r, stop, nil
}

// parseHandshake returns the network and address of a go-plugin handshake
// line after checking its versions and protocol.
func parseHandshake(line string) (network, addr string, err error) {
	parts := strings.Split(strings.TrimSpace(line), "|")
	if len(parts) != 5 {
		return "", "", fmt.Errorf("%w: handshake %q: want CORE|APP|NETWORK|ADDR|grpc, as a plugin prints it", ErrIncompatible, line)
	}
	if parts[0] != "1" {
		return "", "", fmt.Errorf("%w: handshake %q: core protocol version %s, want 1", ErrIncompatible, line, parts[0])
	}
	if v, err := strconv.Atoi(parts[1]); err != nil || v != ProtocolVersion {
		return "", "", fmt.Errorf("%w: the plugin speaks backend protocol version %s, this lazyvi speaks version %d; "+
			"update the plugin (its lazyvi_plugin kit, or backendplugin package) to this lazyvi's", ErrIncompatible, parts[1], ProtocolVersion)
	}
	if parts[4] != "grpc" {
		return "", "", fmt.Errorf("%w: handshake %q: protocol %s, want grpc", ErrIncompatible, line, parts[4])
	}
	switch parts[2] {
	case "unix", "tcp":
	default:
		return "", "", fmt.Errorf("%w: handshake %q: network %s, want unix or tcp", ErrIncompatible, line, parts[2])
	}
	if parts[3] == "" {
		return "", "", fmt.Errorf("%w: handshake %q: no address", ErrIncompatible, line)
	}
	return parts[2], parts[3], nil
}

// unwrapOp returns the error inside err when it is an *Error (its backend
// and step are said again by the caller's), else err.
func unwrapOp(err error) error {
	if e, ok := err.(*Error); ok {
		return fmt.Errorf("%s: %w", e.Op, e.Err)
	}
	return err
}
