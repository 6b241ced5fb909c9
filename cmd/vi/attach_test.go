package main

import (
	"fmt"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/backends/linear"
)

// --plugin-attach: vi uses a backend that a running process serves (here
// this one, the linear backend on a Unix socket), named by its handshake
// line, and gives --backend linear's results; detaching leaves the server
// serving, so that a second run attaches again.
func TestPluginAttach(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(300))
	lis, err := net.Listen("unix", filepath.Join(dir, "backend.sock"))
	if err != nil {
		t.Fatal(err)
	}
	s := backendplugin.NewServer(linear.Backend{})
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	line := fmt.Sprintf("1|%d|unix|%s|grpc", backendplugin.ProtocolVersion, lis.Addr())
	args := []string{"estimate", "--data", "lin.csv", "--estimators", "lazy,dropout", "--format", "json", "--progress", "off"}
	want := parseReport(t, []byte(viOK(t, dir, append(args, "--backend", "linear")...)))
	for i := range 2 {
		got := parseReport(t, []byte(viOK(t, dir, append(args, "--plugin-attach", line, "--backend", "linear")...)))
		for _, r := range append(got.Results, want.Results...) {
			delete(r, "seconds")
		}
		if !reflect.DeepEqual(got.Results, want.Results) {
			t.Errorf("run %d attached: results %v, want --backend linear's %v", i+1, got.Results, want.Results)
		}
	}
	out := viOK(t, dir, append(args, "--plugin-attach", line)...)
	if r := parseReport(t, []byte(out)); r.Backend != "plugin" {
		t.Errorf("without --backend: backend %q, want plugin", r.Backend)
	}
}

// A handshake of another protocol version, or --plugin-attach with a flag
// that starts a backend, is refused on one line with exit code 2.
func TestPluginAttachRefused(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "lin.csv"), linearCSV(50))
	v := backendplugin.ProtocolVersion
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--plugin-attach", fmt.Sprintf("1|%d|unix|/nonexistent|grpc", v+1)},
			fmt.Sprintf("the plugin speaks backend protocol version %d, this lazyvi speaks version %d", v+1, v)},
		{[]string{"--plugin-attach", "127.0.0.1:9"}, "want CORE|APP|NETWORK|ADDR|grpc"},
		{[]string{"--plugin-attach", "1|2|unix|/x|grpc", "--plugin", "vi"}, "--plugin-attach and --plugin exclude each other"},
		{[]string{"--plugin-attach", "1|2|unix|/x|grpc", "--backend-process"}, "--plugin-attach and --backend-process exclude each other"},
	} {
		_, stderr, code := vi(t, dir, append([]string{"estimate", "--data", "lin.csv", "--progress", "off"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
