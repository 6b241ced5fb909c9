package suggest

import "testing"

func TestNearest(t *testing.T) {
	flags := []string{"data", "target", "estimators", "eval-data", "missing", "features"}
	for _, tc := range []struct{ in, want string }{
		{"estimator", "estimators"},
		{"estimatros", "estimators"},
		{"Target", "target"},
		{"featurs", "features"},
		{"missng", "missing"},
		{"xyz", ""},
		{"seed", ""},
	} {
		if got := Nearest(tc.in, flags); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := DidYouMean("estimator", flags, func(s string) string { return "--" + s }); got != "; did you mean --estimators?" {
		t.Errorf("DidYouMean = %q", got)
	}
}
