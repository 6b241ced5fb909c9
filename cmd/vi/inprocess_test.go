package main

import (
	"context"
	"io"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
)

// gcPercent returns the collector's current GOGC setting.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestOpenInProcess: a built-in backend opens in this process (the
// registered backend itself, no subprocess) with the collector at
// backendplugin.BackendGCPercent while it is open and the previous setting restored when
// it is released; --backend-process serves it from a subprocess instead.
func TestOpenInProcess(t *testing.T) {
	t.Setenv("GOGC", "")
	want, err := framework.LookupBackend("mlp")
	if err != nil {
		t.Fatal(err)
	}
	before := gcPercent()
	be, release, err := backendSpec{name: "mlp"}.open(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.TypeOf(be) != reflect.TypeOf(want) {
		t.Errorf("built-in backend opened as %T, want the registered %T in this process", be, want)
	}
	if got := gcPercent(); got != backendplugin.BackendGCPercent {
		t.Errorf("GOGC while the backend is open: %d, want %d", got, backendplugin.BackendGCPercent)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if got := gcPercent(); got != before {
		t.Errorf("GOGC after release: %d, want %d as before", got, before)
	}

	be, release, err = backendSpec{name: "mlp", process: true}.open(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if reflect.TypeOf(be) == reflect.TypeOf(want) {
		t.Errorf("--backend-process opened %T, the in-process backend", be)
	}
	if got := gcPercent(); got != before {
		t.Errorf("GOGC with the backend in a subprocess: %d, want %d as before", got, before)
	}
}
