package frameworktest

import (
	"context"
	"errors"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// runPersist checks a backend with Capabilities.Persist: for each task, a
// fitted model's state loaded into a new model of the same spec predicts,
// and with gradients differentiates and shifts, bit for bit as the fitted
// model; the state is the same bytes when saved again; loading a damaged
// state or one of another architecture is a usage error.
func runPersist(t tb, b framework.Backend, c *config, tasks []framework.Task) {
	if !b.Capabilities().Persist {
		return
	}
	for _, task := range tasks {
		t.run("Persist/"+task.String(), func(t tb) { checkPersist(t, b, c, task) })
	}
}

func checkPersist(t tb, b framework.Backend, c *config, task framework.Task) {
	ctx := context.Background()
	m, x, _ := fitted(t, b, c, task)
	p, ok := framework.As[framework.Persister](m)
	if !ok {
		t.Fatalf("Capabilities.Persist, but the %s model is no framework.Persister", task)
	}
	state, err := p.SaveState(ctx)
	if err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	fresh := func(spec framework.ModelSpec) framework.Persister {
		t.Helper()
		nm, err := b.New(ctx, spec)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		t.Cleanup(func() { _ = framework.Release(nm) })
		np, ok := framework.As[framework.Persister](nm)
		if !ok {
			t.Fatalf("a new %s model is no framework.Persister", task)
		}
		return np
	}
	loaded := fresh(c.spec(task))
	if err := loaded.LoadState(ctx, state); err != nil {
		t.Fatalf("LoadState of a state just saved: %v", err)
	}
	want, err := m.Predict(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loaded.Predict(ctx, x)
	if err != nil {
		t.Fatalf("Predict after LoadState: %v", err)
	}
	if !mat.Equal(got, want) {
		t.Errorf("the loaded model predicts otherwise than the saved one (largest difference %.3g)", maxAbsDiff(got, want))
	}
	if a, b := framework.FitReportOf(m), framework.FitReportOf(loaded); a != b {
		t.Errorf("the loaded model reports its training as %+v, the saved one %+v", b, a)
	}
	if g, ok := framework.As[framework.Gradienter](m); ok {
		lg, ok := framework.As[framework.Gradienter](loaded)
		if !ok || lg.NumParams() != g.NumParams() {
			t.Fatalf("the loaded model has no gradients or another number of parameters")
		}
		jw, err := g.Jacobian(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		jg, err := lg.Jacobian(ctx, x)
		if err != nil {
			t.Fatalf("Jacobian after LoadState: %v", err)
		}
		if !mat.Equal(jg, jw) {
			t.Errorf("the loaded model's Jacobian differs (largest difference %.3g)", maxAbsDiff(jg, jw))
		}
	}
	again, err := loaded.SaveState(ctx)
	if err != nil {
		t.Fatalf("SaveState of a loaded model: %v", err)
	}
	if string(again) != string(state) {
		t.Errorf("a loaded model saves another state (%d bytes, was %d)", len(again), len(state))
	}
	for _, bad := range []struct {
		what  string
		state []byte
	}{{"an empty state", nil}, {"a truncated state", state[:len(state)/2]}, {"garbage", []byte("not a state at all")}} {
		if err := fresh(c.spec(task)).LoadState(ctx, bad.state); err == nil || !errors.Is(err, framework.ErrUsage) {
			t.Errorf("LoadState of %s: err %v, want a usage error", bad.what, err)
		}
	}
	// A model with one more input has another architecture (for the
	// networks, another number of parameters; for a forest, inputs).
	// (A backend that cannot make such a model, such as a CNN whose
	// inputs must form an image, is not asked.)
	other := c.spec(task)
	other.Inputs++
	om, err := b.New(ctx, other)
	if err != nil {
		return
	}
	defer framework.Release(om)
	if op, ok := framework.As[framework.Persister](om); !ok {
		t.Errorf("a new %s model is no framework.Persister", task)
	} else if err := op.LoadState(ctx, state); err == nil || !errors.Is(err, framework.ErrUsage) {
		t.Errorf("LoadState into a model with %d inputs of a state of %d: err %v, want a usage error", other.Inputs, c.p, err)
	}
}
