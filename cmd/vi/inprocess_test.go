package main

import (
	"context"
	"io"
	"reflect"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// TestOpenInProcess: a built-in backend opens in this process (the
// registered backend itself, no subprocess; backendplugin's
// TestLaunchInProcess checks its collector settings); --backend-process
// serves it from a subprocess instead.
func TestOpenInProcess(t *testing.T) {
	want, err := framework.LookupBackend("mlp")
	if err != nil {
		t.Fatal(err)
	}
	be, release, err := backendSpec{name: "mlp"}.open(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.TypeOf(be) != reflect.TypeOf(want) {
		t.Errorf("built-in backend opened as %T, want the registered %T in this process", be, want)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}

	be, release, err = backendSpec{name: "mlp", process: true}.open(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if reflect.TypeOf(be) == reflect.TypeOf(want) {
		t.Errorf("--backend-process opened %T, the in-process backend", be)
	}
}
