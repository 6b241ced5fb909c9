package inference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// Result is the importance of one feature by one estimator.
type Result struct {
	Feature   string  `json:"feature"`
	Estimator string  `json:"estimator"`
	VI        float64 `json:"vi"`
	SE        float64 `json:"se"`
	CILow     float64 `json:"ci_low"`
	CIHigh    float64 `json:"ci_high"`
	// PValue is the one-sided p-value of H0: VI <= delta (the run's
	// delta, default 0) against VI > delta.
	PValue float64 `json:"p_value"`
	// Test is "covariance" where PValue comes from the covariance test
	// (TestCovariance), empty where it is the estimate's own test.
	Test string `json:"test,omitempty"`
	// PAdjusted is PValue adjusted for the estimator's features as one
	// family (holm or bh); nil without an adjustment.
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// BiasBound, with a bias-aware interval (InferOptions.BiasAware), is
	// the bound on the estimate's bias that the interval's half-width and
	// the p-value allow for.
	BiasBound float64 `json:"bias_bound,omitempty"`
	// Combined says how the repetitions were combined where it is not as
	// the run says: CombinedRepetitions where the run ensembled them
	// (InferOptions.Ensemble) but the estimator declines it
	// (framework.Ensembler); empty otherwise.
	Combined string  `json:"combined,omitempty"`
	Seconds  float64 `json:"seconds"`
	// Extra are the estimator's own fields (its Summarize), written after
	// the common ones: lazy's "lambda", the ridge penalty it used (null
	// with "no_update": true when it kept the full model, i.e. fell back
	// to dropout).
	Extra []framework.Field `json:"-"`
}

// CombinedRepetitions is Result.Combined of an estimator that declines a
// run's ensemble: its VI is the mean of the repetitions' own estimates,
// its squared standard error the mean of theirs plus their spread
// var_m(VI_m)/M, and it is neither debiased nor bias-aware.
const CombinedRepetitions = "repetitions"

// MarshalJSON writes the common fields, then Extra in its order.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.Extra) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, f := range r.Extra {
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("result field %s: %w", f.Key, err)
		}
		b = append(append(append(append(b, ','), k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes: the keys that are not
// common fields go to Extra, in their order (numbers as float64).
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Result(v)
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := t.(string)
		var val any
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if !resultKeys[key] {
			r.Extra = append(r.Extra, framework.Field{Key: key, Value: val})
		}
	}
	return nil
}

// resultKeys are the JSON keys of Result's common fields.
var resultKeys = func() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeOf(Result{})
	for i := 0; i < t.NumField(); i++ {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// checkFinite reports a VI, standard error, interval bound or p-value that
// is not finite (ErrNonFinite): the arithmetic overflowed, and a report
// must not carry it (JSON cannot).
func (r Result) checkFinite() error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"VI", r.VI}, {"standard error", r.SE}, {"interval's lower end", r.CILow}, {"interval's upper end", r.CIHigh}, {"p-value", r.PValue}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) {
			return nonFinite("the "+v.name, v.v)
		}
	}
	return nil
}

// Get returns the value of the estimator-specific field key.
func (r Result) Get(key string) (any, bool) {
	for _, f := range r.Extra {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}
