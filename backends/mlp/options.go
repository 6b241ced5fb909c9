package mlp

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// Defaults of the backend's options; see Backend.Options for their meaning.
const (
	DefaultHidden   = "50"
	DefaultEpochs   = 200
	DefaultPatience = 3
	DefaultTol      = 1e-4
	DefaultLR       = 1e-3
	DefaultBatch    = 256
)

// config is a parsed ModelSpec.Options.
type config struct {
	hidden   []int
	epochs   int
	patience int
	tol      float64
	lr       float64
	batch    int
}

var optionInfo = []framework.OptionInfo{
	{Name: "hidden", Default: DefaultHidden,
		Usage: "comma-separated widths of the hidden ReLU layers, input side first (\"100,50\")"},
	{Name: "epochs", Default: strconv.Itoa(DefaultEpochs),
		Usage: "maximum number of training epochs (passes over the training set)"},
	{Name: "patience", Default: strconv.Itoa(DefaultPatience),
		Usage: "stop after this many consecutive epochs without a relative improvement of the full training loss by more than tol"},
	{Name: "tol", Default: strconv.FormatFloat(DefaultTol, 'g', -1, 64),
		Usage: "relative improvement of the training loss that counts as progress for early stopping"},
	{Name: "lr", Default: strconv.FormatFloat(DefaultLR, 'g', -1, 64),
		Usage: "Adam learning rate"},
	{Name: "batch", Default: strconv.Itoa(DefaultBatch),
		Usage: "minibatch size (capped at the number of training rows)"},
}

func defaultConfig() config {
	return config{
		hidden:   []int{50},
		epochs:   DefaultEpochs,
		patience: DefaultPatience,
		tol:      DefaultTol,
		lr:       DefaultLR,
		batch:    DefaultBatch,
	}
}

// parseOptions turns ModelSpec.Options into a config. Unknown keys and bad
// values are usage errors naming the option.
func parseOptions(opts map[string]string) (config, error) {
	cfg := defaultConfig()
	// Sorted keys, so that the first error reported does not depend on map
	// iteration order.
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(opts[k])
		var err error
		switch k {
		case "hidden":
			cfg.hidden, err = parseHidden(v)
		case "epochs":
			cfg.epochs, err = parsePositiveInt(k, v)
		case "patience":
			cfg.patience, err = parsePositiveInt(k, v)
		case "batch":
			cfg.batch, err = parsePositiveInt(k, v)
		case "tol":
			cfg.tol, err = parseFloat(k, v, false)
		case "lr":
			cfg.lr, err = parseFloat(k, v, true)
		default:
			names := make([]string, len(optionInfo))
			for i, o := range optionInfo {
				names[i] = o.Name
			}
			return config{}, framework.Usagef("mlp: unknown option %q (known: %s)", k, strings.Join(names, ", "))
		}
		if err != nil {
			return config{}, err
		}
	}
	return cfg, nil
}

func parseHidden(v string) ([]int, error) {
	if v == "" {
		return nil, framework.Usagef("mlp: option hidden: empty (want widths such as \"50\" or \"100,50\")")
	}
	parts := strings.Split(v, ",")
	out := make([]int, len(parts))
	for i, s := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, framework.Usagef("mlp: option hidden: bad width %q in %q (want positive integers such as \"100,50\")", s, v)
		}
		out[i] = n
	}
	return out, nil
}

func parsePositiveInt(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, framework.Usagef("mlp: option %s: bad value %q (want a positive integer)", name, v)
	}
	return n, nil
}

// parseFloat parses a finite non-negative float; positive additionally
// rejects zero.
func parseFloat(name, v string, positive bool) (float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || (positive && f == 0) {
		want := "a finite number >= 0"
		if positive {
			want = "a finite number > 0"
		}
		return 0, framework.Usagef("mlp: option %s: bad value %q (want %s)", name, v, want)
	}
	return f, nil
}
