package shapley

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
)

// The JSON keys of Result's own fields, written as inference.Result's
// Extra after its common fields.
const (
	keySEInfluence = "se_influence"
	keySESampling  = "se_sampling"
	keyLambda      = "lambda"
)

// MarshalJSON writes the inference.Result, then se_influence, se_sampling
// and lambda (when set).
func (r Result) MarshalJSON() ([]byte, error) {
	ir := r.Result
	ir.Extra = append(slices.Clip(ir.Extra),
		framework.Field{Key: keySEInfluence, Value: r.SEInfluence},
		framework.Field{Key: keySESampling, Value: r.SESampling})
	if r.Lambda != nil {
		ir.Extra = append(ir.Extra, framework.Field{Key: keyLambda, Value: *r.Lambda})
	}
	return json.Marshal(ir)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Result) UnmarshalJSON(b []byte) error {
	var ir inference.Result
	if err := json.Unmarshal(b, &ir); err != nil {
		return err
	}
	*r = Result{Result: ir}
	r.Extra = nil
	for _, f := range ir.Extra {
		if f.Value == nil {
			continue
		}
		v, ok := f.Value.(float64)
		switch f.Key {
		case keySEInfluence:
			r.SEInfluence = v
		case keySESampling:
			r.SESampling = v
		case keyLambda:
			r.Lambda = &v
		default:
			r.Extra = append(r.Extra, f)
			continue
		}
		if !ok {
			return fmt.Errorf("shapley result %s: %v is not a number", f.Key, f.Value)
		}
	}
	return nil
}
