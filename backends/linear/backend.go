package linear

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

func init() {
	framework.RegisterBackend("linear", Backend{})
}

// Backend builds linear models: OLS for regression, logistic regression for
// a binary response. The zero value is ready to use; it is registered as
// "linear".
type Backend struct{}

var _ framework.Backend = Backend{}

// Capabilities reports gradients, the kernel, binary classification and
// Jacobian products (MatrixFree: from its small Jacobian).
func (Backend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Gradients: true, Kernel: true, Classification: true, Persist: true, MatrixFree: true}
}

// Defaults of the options.
const (
	DefaultRidge   = 0.0
	DefaultMaxIter = 100
)

var optionInfo = []framework.OptionInfo{
	{Name: "ridge", Default: "0",
		Usage: "L2 penalty on the slopes of the standardised inputs (not the intercept), unnormalised like sklearn's Ridge(alpha); 0 is plain OLS / logistic regression; auto chooses it by 5-fold cross-validation on the training rows among n 10^k, k from -4 to 0"},
	{Name: "maxiter", Default: strconv.Itoa(DefaultMaxIter),
		Usage: "maximum Newton (IRLS) iterations of logistic regression"},
}

// Options lists the recognised ModelSpec.Options keys with their defaults.
func (Backend) Options() []framework.OptionInfo {
	return append([]framework.OptionInfo(nil), optionInfo...)
}

// New returns an untrained *Model for spec.
func (Backend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	return NewModel(spec)
}

type config struct {
	ridge   float64
	auto    bool // ridge is chosen by cross-validation at Fit (option ridge auto)
	maxIter int
}

func parseOptions(opts map[string]string) (config, error) {
	cfg := config{ridge: DefaultRidge, maxIter: DefaultMaxIter}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(opts[k])
		switch k {
		case "ridge":
			if strings.EqualFold(v, RidgeAuto) {
				cfg.auto = true
				continue
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
				return config{}, framework.Usagef("linear: option ridge: bad value %q (want a finite number >= 0, or auto)", v)
			}
			cfg.ridge = f
		case "maxiter":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return config{}, framework.Usagef("linear: option maxiter: bad value %q (want a positive integer)", v)
			}
			cfg.maxIter = n
		default:
			return config{}, framework.Usagef("linear: unknown option %q (known: ridge, maxiter)", k)
		}
	}
	return cfg, nil
}
