package pipeline

import (
	"testing"

	"github.com/lazyvi/lazyvi/framework"
)

func TestInferTaskMulticlass(t *testing.T) {
	rep := func(labels []float64, times int) []float64 {
		var out []float64
		for range times {
			out = append(out, labels...)
		}
		return out
	}
	cases := []struct {
		name string
		y    []float64
		want framework.Task
	}{
		{"binary", rep([]float64{0, 1}, 5), framework.Binary},
		{"three classes", rep([]float64{0, 1, 2}, 5), framework.Multiclass},
		{"ten classes", rep([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 5), framework.Multiclass},
		{"a class with 4 rows", append(rep([]float64{0, 1}, 5), 2, 2, 2, 2), framework.Regression},
		{"labels from 1", rep([]float64{1, 2, 3}, 5), framework.Regression},
		{"a gap", rep([]float64{0, 1, 3}, 5), framework.Regression},
		{"not integers", rep([]float64{0, 1, 2.5}, 5), framework.Regression},
		{"negative", rep([]float64{0, 1, -1}, 5), framework.Regression},
		{"21 classes", rep(seq(21), 5), framework.Regression},
		{"20 classes", rep(seq(20), 5), framework.Multiclass},
	}
	for _, c := range cases {
		if got := InferTask(c.y); got != c.want {
			t.Errorf("%s: want %v, got %v", c.name, c.want, got)
		}
	}
	if k, err := NumClasses([]float64{0, 1, 1, 0}); k != 2 || err != nil {
		t.Errorf("NumClasses of 0/1: want 2, got %d, %v", k, err)
	}
	if _, err := NumClasses([]float64{0, 2}); err == nil {
		t.Errorf("NumClasses with label 1 missing: want an error")
	}
	if tk, err := framework.ParseTask("multiclass"); tk != framework.Multiclass || err != nil || tk.String() != "multiclass" {
		t.Errorf("ParseTask(multiclass) = %v, %v", tk, err)
	}
}

func seq(k int) []float64 {
	out := make([]float64, k)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}
