package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

// FuzzOpt parses two --opt flags as vi does, then gives the options to
// each built-in backend as a run would. Properties: every error is one
// line (and a backend's a usage error); parsed keys are trimmed, non-empty
// and without '='; printing the options as --opt key=value and parsing
// them again gives the same options; a backend that accepts them knows
// every key.
func FuzzOpt(f *testing.F) {
	for _, s := range [][2]string{
		{"hidden=50", "epochs=5"}, {"lr=0.001", "tol=1e-4"}, {"batch=32", "patience=3"}, {"hidden=100,50", "hidden=8"},
		{" hidden = 8 , 4 ", "image=8x8"}, {"ridge=0.5", "maxiter=10"}, {"trees=100", "depth=3"},
		{"=x", "x"}, {"lr=0x1p-2", "epochs=1_000"}, {"lr=NaN", "tol=-Inf"}, {"lr=", "hidden=,"}, {"a=b=c", "a =d"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		opts := optionsFlag{}
		fs := flag.NewFlagSet("estimate", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(opts, "opt", "")
		if err := fs.Parse([]string{"--opt", a, "--opt", b}); err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		keys := make([]string, 0, len(opts))
		for k := range opts {
			if k == "" || k != strings.TrimSpace(k) || strings.Contains(k, "=") {
				t.Fatalf("bad key %q", k)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		again := optionsFlag{}
		for _, k := range keys {
			if err := again.Set(k + "=" + opts[k]); err != nil {
				t.Fatalf("printed option %s=%s does not parse: %v", k, opts[k], err)
			}
		}
		if len(again) != len(opts) || again.String() != opts.String() {
			t.Fatalf("round trip: %v -> %v", opts, again)
		}
		for _, name := range framework.Backends() {
			be, err := framework.LookupBackend(name)
			if err != nil {
				t.Fatal(err)
			}
			_, err = be.New(context.Background(), framework.ModelSpec{Task: framework.Regression, Inputs: 4, Options: opts})
			if err != nil {
				if !errors.Is(err, framework.ErrUsage) || strings.ContainsAny(err.Error(), "\r\n") {
					t.Fatalf("backend %s: want a one-line usage error, got %T %q", name, err, err)
				}
				continue
			}
			var known []string
			for _, o := range be.Options() {
				known = append(known, o.Name)
			}
			for _, k := range keys {
				if !slices.Contains(known, k) {
					t.Fatalf("backend %s took the unknown option %q", name, k)
				}
			}
		}
	})
}
