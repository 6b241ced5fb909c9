package torch_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/test/bufconn"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// BenchmarkLazyPerFeature times lazy's reduction of one feature (the six
// features in turn) on the linear setting (n = 2000, rho = 0.9), the full
// model trained once outside the timing: the Go mlp over the plugin
// transport (in process, as vi serves it from a subprocess) against
// lazyvi-torch's default network (the same architecture: one ReLU layer of
// 50, M = 401) and a user's two-layer tanh module (M = 1313).
//
//	go test ./plugins/torch/ -run '^$' -bench LazyPerFeature -benchtime 12x
func BenchmarkLazyPerFeature(b *testing.B) {
	d, _ := linear(b, accN, 1)
	// The Go mlp behind the plugin transport, over an in-memory connection.
	lis := bufconn.Listen(1 << 20)
	srv := backendplugin.NewServer(mlp.Backend{})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	goMLP, stop, err := backendplugin.Connect(context.Background(), "mlp", lis.DialContext)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	for _, bc := range []struct {
		name    string
		backend func(*testing.B) framework.Backend
		opts    map[string]string
	}{
		{"mlp", func(*testing.B) framework.Backend { return goMLP }, nil},
		{"torch", func(b *testing.B) framework.Backend { return sharedBackend(b) }, nil},
		{"torch-tanh", func(b *testing.B) framework.Backend { return sharedBackend(b) }, map[string]string{"module": "testdata/tanh.py"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			be := bc.backend(b)
			p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: be, Seed: 1, Options: bc.opts})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			feats := p.Features()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := (lazy.Estimator{}).Reduce(context.Background(), p, feats[i%len(feats)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
