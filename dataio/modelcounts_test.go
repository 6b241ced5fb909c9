package dataio

import "testing"

// TestCountsString: what a model file of each shape holds, in words.
func TestCountsString(t *testing.T) {
	for _, c := range []struct {
		crossfit, repeats int
		want              string
	}{
		{0, 1, "one train/evaluation split's model"},
		{3, 1, "3 cross-fitting folds' models"},
		{0, 2, "2 repetitions of one train/evaluation split's model"},
		{3, 3, "3 repetitions of 3 cross-fitting folds' models"},
	} {
		if got := CountsString(c.crossfit, c.repeats); got != c.want {
			t.Errorf("CountsString(%d, %d) = %q, want %q", c.crossfit, c.repeats, got, c.want)
		}
	}
}
