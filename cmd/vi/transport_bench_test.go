package main

import (
	"context"
	"os/exec"
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/backends/mlp"
	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
	"github.com/lazyvi/lazyvi/simulate"
)

// BenchmarkLazyTransport times lazy per feature with the MLP in this process
// and behind the plugin transport (the vi binary serving "mlp" in a
// subprocess, as `vi estimate --backend-process` runs it). The models are identical (same seed,
// same data), so the difference of the two ns/op is the transport's cost and
// (plugin - inprocess) / plugin its share of a lazy run.
func BenchmarkLazyTransport(b *testing.B) {
	for _, c := range []struct {
		setting string
		n       int
		rho     float64
	}{{"highdim", 1000, 0.5}, {"linear", 5000, 0.9}} {
		sim, err := simulate.Generate(c.setting, c.n, c.rho, 1)
		if err != nil {
			b.Fatal(err)
		}
		d := &dataio.Dataset{Source: c.setting, Names: sim.Names, X: sim.X}
		client, err := backendplugin.Open(context.Background(), "mlp", exec.Command(viBinary(b), serveBackendArg, "mlp"))
		if err != nil {
			b.Fatal(err)
		}
		for _, be := range []struct {
			name string
			b    framework.Backend
		}{{"inprocess", mlp.Backend{}}, {"plugin", client.Backend()}} {
			p, err := pipeline.Prepare(context.Background(), d, pipeline.Config{Backend: be.b, BackendName: "mlp", Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			feats := p.Features()
			b.Run(c.setting+"/"+be.name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := (lazy.Estimator{}).Reduce(context.Background(), p, feats[i%len(feats)]); err != nil {
						b.Fatal(err)
					}
				}
			})
			p.Close()
		}
		client.Close()
	}
}
