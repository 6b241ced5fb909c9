package cnn

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/framework"
)

// Defaults of the backend's options; see Backend.Options.
const (
	DefaultFilters  = 16
	DefaultKernel   = 3
	DefaultPool     = 2
	DefaultPoolKind = "max"
	DefaultHidden   = "64"
	DefaultEpochs   = 100
	DefaultPatience = 5
	DefaultTol      = 1e-4
	DefaultLR       = 2e-3
	DefaultBatch    = 32
)

// config is a parsed ModelSpec.Options.
type config struct {
	imgH, imgW int // 0: a square image of Inputs pixels
	filters    int
	kernel     int
	pool       int
	maxPool    bool
	hidden     []int
	epochs     int
	patience   int
	tol        float64
	lr         float64
	batch      int
}

var optionInfo = []framework.OptionInfo{
	{Name: "image", Default: "square",
		Usage: "image shape HxW (\"8x8\"): the inputs are its pixels in row-major order; square: sqrt(inputs) x sqrt(inputs)"},
	{Name: "filters", Default: strconv.Itoa(DefaultFilters), Usage: "number of convolution filters"},
	{Name: "kernel", Default: strconv.Itoa(DefaultKernel), Usage: "convolution kernel size k (k x k, odd; zero padding keeps the image size)"},
	{Name: "pool", Default: strconv.Itoa(DefaultPool), Usage: "pooling window and stride (1: no pooling)"},
	{Name: "pool_kind", Default: DefaultPoolKind, Usage: "pooling: max or avg"},
	{Name: "hidden", Default: DefaultHidden,
		Usage: "comma-separated widths of the dense ReLU layers after pooling (\"\" or 0: straight to the output)"},
	{Name: "epochs", Default: strconv.Itoa(DefaultEpochs), Usage: "maximum number of training epochs"},
	{Name: "patience", Default: strconv.Itoa(DefaultPatience),
		Usage: "stop after this many consecutive epochs without a relative improvement of the full training loss by more than tol"},
	{Name: "tol", Default: strconv.FormatFloat(DefaultTol, 'g', -1, 64), Usage: "relative improvement of the training loss that counts as progress"},
	{Name: "lr", Default: strconv.FormatFloat(DefaultLR, 'g', -1, 64), Usage: "Adam learning rate"},
	{Name: "batch", Default: strconv.Itoa(DefaultBatch), Usage: "minibatch size (capped at the number of training rows)"},
}

func defaultConfig() config {
	return config{filters: DefaultFilters, kernel: DefaultKernel, pool: DefaultPool, maxPool: true,
		hidden: []int{64}, epochs: DefaultEpochs, patience: DefaultPatience, tol: DefaultTol, lr: DefaultLR, batch: DefaultBatch}
}

// ParseImage parses an image shape "HxW" (also "H,W" or "HXW").
func ParseImage(v string) (h, w int, err error) {
	s := strings.ToLower(strings.TrimSpace(v))
	a, b, ok := strings.Cut(s, "x")
	if !ok {
		a, b, ok = strings.Cut(s, ",")
	}
	if ok {
		h, err1 := strconv.Atoi(strings.TrimSpace(a))
		w, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 == nil && err2 == nil && h > 0 && w > 0 {
			return h, w, nil
		}
	}
	return 0, 0, framework.Usagef("cnn: option image: bad shape %q (want HxW such as 8x8)", v)
}

func parseOptions(opts map[string]string) (config, error) {
	cfg := defaultConfig()
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.TrimSpace(opts[k])
		var err error
		switch k {
		case "image":
			if v != "" && v != "square" {
				cfg.imgH, cfg.imgW, err = ParseImage(v)
			}
		case "filters":
			cfg.filters, err = positiveInt(k, v)
		case "kernel":
			cfg.kernel, err = positiveInt(k, v)
			if err == nil && cfg.kernel%2 == 0 {
				err = framework.Usagef("cnn: option kernel: %d is even (want an odd size such as 3)", cfg.kernel)
			}
		case "pool":
			cfg.pool, err = positiveInt(k, v)
		case "pool_kind":
			switch v {
			case "max":
				cfg.maxPool = true
			case "avg", "mean", "average":
				cfg.maxPool = false
			default:
				err = framework.Usagef("cnn: option pool_kind: %q (want max or avg)", v)
			}
		case "hidden":
			cfg.hidden, err = parseHidden(v)
		case "epochs":
			cfg.epochs, err = positiveInt(k, v)
		case "patience":
			cfg.patience, err = positiveInt(k, v)
		case "batch":
			cfg.batch, err = positiveInt(k, v)
		case "tol", "lr":
			var f float64
			f, err = strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || (k == "lr" && f == 0) {
				err = framework.Usagef("cnn: option %s: bad value %q (want a finite number %s)", k, v, map[bool]string{true: "> 0", false: ">= 0"}[k == "lr"])
			} else if k == "lr" {
				cfg.lr = f
			} else {
				cfg.tol = f
			}
		default:
			names := make([]string, len(optionInfo))
			for i, o := range optionInfo {
				names[i] = o.Name
			}
			return config{}, framework.Usagef("cnn: unknown option %q (known: %s)", k, strings.Join(names, ", "))
		}
		if err != nil {
			return config{}, err
		}
	}
	return cfg, nil
}

func parseHidden(v string) ([]int, error) {
	if v == "" || v == "0" || v == "none" {
		return nil, nil
	}
	var out []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, framework.Usagef("cnn: option hidden: bad width %q in %q (want positive integers such as \"64\")", s, v)
		}
		out = append(out, n)
	}
	return out, nil
}

func positiveInt(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, framework.Usagef("cnn: option %s: bad value %q (want a positive integer)", name, v)
	}
	return n, nil
}
