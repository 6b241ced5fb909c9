package forest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

func init() {
	framework.RegisterBackend("forest", Backend{})
}

// Backend builds random forests. The zero value is ready to use; it is
// registered as "forest". Its models have no gradients: the dropout and
// retrain estimators apply, lazy does not.
type Backend struct{}

var _ framework.Backend = Backend{}

// Capabilities reports binary and multiclass classification (and nothing
// else: a forest is piecewise constant, with no parameter gradients).
func (Backend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Classification: true, Multiclass: true, Persist: true}
}

var optionInfo = []framework.OptionInfo{
	{Name: "trees", Default: "100", Usage: "number of trees"},
	{Name: "max_depth", Default: "0", Usage: "maximum depth of a tree (the root has depth 0); 0: grown until min_leaf stops it"},
	{Name: "min_leaf", Default: "5 (regression), 1 (binary)", Usage: "least number of training rows in a leaf, bootstrap repeats counted"},
	{Name: "mtry", Default: "p/3 (regression), sqrt(p) (binary)", Usage: "features drawn at random as split candidates at each node (at least 1, at most p)"},
	{Name: "bootstrap", Default: "true", Usage: "grow each tree on a bootstrap sample (false: on all rows, and no out-of-bag error)"},
	{Name: "workers", Default: "all CPUs", Usage: "trees grown at a time; the forest does not depend on it"},
}

// Options lists the recognised ModelSpec.Options keys with their defaults.
func (Backend) Options() []framework.OptionInfo {
	return append([]framework.OptionInfo(nil), optionInfo...)
}

// New returns an untrained *Model for spec.
func (Backend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	return NewModel(spec)
}

// Model is a random forest as a framework.Model: Predict gives the mean
// prediction (regression), the mean share of class 1 over the trees,
// P(Y = 1) (binary), or the mean shares of the K classes (multiclass).
type Model struct {
	task   framework.Task
	inputs int
	cfg    Config
	f      *Forest
}

// NewModel returns an untrained model for spec.
func NewModel(spec framework.ModelSpec) (*Model, error) {
	if spec.Task != framework.Regression && spec.Task != framework.Binary && spec.Task != framework.Multiclass {
		return nil, framework.Usagef("forest: unsupported task %v", spec.Task)
	}
	if spec.Task == framework.Multiclass && spec.Classes < 2 {
		return nil, framework.Usagef("forest: multiclass needs at least 2 classes, got %d", spec.Classes)
	}
	if spec.Inputs < 1 {
		return nil, framework.Usagef("forest: model needs at least one input column, got %d", spec.Inputs)
	}
	cfg, err := parseOptions(spec.Options, spec.Inputs)
	if err != nil {
		return nil, err
	}
	cfg.Seed = spec.Seed
	switch spec.Task {
	case framework.Binary:
		cfg.Classes = 2
	case framework.Multiclass:
		cfg.Classes = spec.Classes
	}
	return &Model{task: spec.Task, inputs: spec.Inputs, cfg: cfg}, nil
}

func parseOptions(opts map[string]string, p int) (Config, error) {
	var cfg Config
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(opts[k])
		intOpt := func(dst *int, min int) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < min {
				return framework.Usagef("forest: option %s: bad value %q (want an integer >= %d)", k, v, min)
			}
			*dst = n
			return nil
		}
		var err error
		switch k {
		case "trees":
			err = intOpt(&cfg.Trees, 1)
		case "max_depth":
			err = intOpt(&cfg.MaxDepth, 0)
		case "min_leaf":
			err = intOpt(&cfg.MinLeaf, 1)
		case "workers":
			err = intOpt(&cfg.Workers, 1)
		case "mtry":
			if err = intOpt(&cfg.MTry, 1); err == nil && cfg.MTry > p {
				err = framework.Usagef("forest: option mtry: %d is more than the %d features", cfg.MTry, p)
			}
		case "bootstrap":
			b, perr := strconv.ParseBool(v)
			if perr != nil {
				err = framework.Usagef("forest: option bootstrap: bad value %q (want true or false)", v)
			}
			cfg.NoBootstrap = !b
		default:
			names := make([]string, len(optionInfo))
			for i, o := range optionInfo {
				names[i] = o.Name
			}
			err = framework.Usagef("forest: unknown option %q (known: %s)", k, strings.Join(names, ", "))
		}
		if err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// Fit grows the forest. It may be called once.
func (md *Model) Fit(ctx context.Context, x mat.Matrix, y []float64) error {
	if md.f != nil {
		return errors.New("forest: Fit called twice")
	}
	if x == nil {
		return errors.New("forest: nil input matrix")
	}
	if _, c := x.Dims(); c != md.inputs {
		return fmt.Errorf("forest: input has %d columns, model expects %d", c, md.inputs)
	}
	if md.task == framework.Binary {
		for i, v := range y {
			if v != 0 && v != 1 {
				return framework.Usagef("forest: binary response must be 0 or 1, row %d is %v", i, v)
			}
		}
	}
	f, err := Fit(ctx, x, y, md.cfg)
	if err != nil {
		return err
	}
	md.f = f
	return nil
}

// Predict returns the n x 1 predictions, means for regression and
// P(Y = 1) for binary, or for multiclass the n x K class probabilities.
func (md *Model) Predict(ctx context.Context, x mat.Matrix) (*mat.Dense, error) {
	if md.f == nil {
		return nil, errors.New("forest: model is not fitted")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("forest: %w", err)
	}
	if x == nil {
		return nil, errors.New("forest: nil input matrix")
	}
	out, err := md.f.Predict(x)
	if err != nil || md.task != framework.Binary {
		return out, err
	}
	n, _ := out.Dims()
	p1 := mat.NewDense(n, 1, nil)
	p1.Copy(out.ColView(1))
	return p1, nil
}

// Forest returns the fitted forest (nil before Fit), e.g. for its
// out-of-bag error.
func (md *Model) Forest() *Forest { return md.f }

// OOB returns the fitted forest's out-of-bag error; see Forest.OOB.
func (md *Model) OOB() (OOB, bool) {
	if md.f == nil {
		return OOB{}, false
	}
	return md.f.OOB()
}
