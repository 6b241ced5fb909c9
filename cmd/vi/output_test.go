package main

import "testing"

func TestTruthPath(t *testing.T) {
	for in, want := range map[string]string{"lin.csv": "lin.truth.json", "d/x.csv": "d/x.truth.json", "data": "data.truth.json"} {
		if got := truthPath(in); got != want {
			t.Errorf("truthPath(%q): want %q, got %q", in, want, got)
		}
	}
}
