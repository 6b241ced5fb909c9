package shapley

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lazyvi/lazyvi/inference"
)

// TestResultJSON: a Result's JSON is inference.Result's fields, then
// se_influence, se_sampling and lambda (when set), and reads back as it was.
func TestResultJSON(t *testing.T) {
	adj, lambda := 0.04, 0.5
	for _, c := range []struct {
		r    Result
		want string
	}{
		{Result{Result: inference.Result{Feature: "x1", Estimator: "shapley-lazy", VI: 0.25, SE: 0.05, CILow: 0.15, CIHigh: 0.35, PValue: 0.01, PAdjusted: &adj, Seconds: 1.5},
			SEInfluence: 0.03, SESampling: 0.04, Lambda: &lambda},
			`{"feature":"x1","estimator":"shapley-lazy","vi":0.25,"se":0.05,"ci_low":0.15,"ci_high":0.35,"p_value":0.01,"p_adjusted":0.04,"seconds":1.5,"se_influence":0.03,"se_sampling":0.04,"lambda":0.5}`},
		{Result{Result: inference.Result{Feature: "x2", Estimator: "shapley-retrain", VI: -1, SE: 2, CILow: -5, CIHigh: 3, PValue: 0.7, Seconds: 0.25}, SEInfluence: 2},
			`{"feature":"x2","estimator":"shapley-retrain","vi":-1,"se":2,"ci_low":-5,"ci_high":3,"p_value":0.7,"seconds":0.25,"se_influence":2,"se_sampling":0}`},
	} {
		b, err := json.Marshal(c.r)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("Marshal:\n got %s\nwant %s", b, c.want)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, c.r) {
			t.Errorf("Unmarshal(%s) = %+v, want %+v", b, back, c.r)
		}
	}
	var r Result
	if err := json.Unmarshal([]byte(`{"feature":"x1","se_sampling":"a"}`), &r); err == nil {
		t.Errorf("se_sampling a string: want an error")
	}
}
