package cnn

import (
	"strconv"
	"strings"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

// Defaults of the backend's options; see Backend.Options.
const (
	DefaultFilters  = 16
	DefaultKernel   = 3
	DefaultPool     = 2
	DefaultPoolKind = "max"
	DefaultHidden   = "64"
	DefaultEpochs   = 500
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
	train      nn.Training
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
		Usage: "stop after this many consecutive epochs without a relative improvement of the validation loss (the training loss with valid=0) by more than tol"},
	{Name: "tol", Default: strconv.FormatFloat(DefaultTol, 'g', -1, 64), Usage: "relative improvement of the validation loss that counts as progress"},
	{Name: "valid", Default: strconv.FormatFloat(nn.DefaultValid, 'g', -1, 64), Usage: nn.ValidUsage},
	{Name: "lr", Default: strconv.FormatFloat(DefaultLR, 'g', -1, 64), Usage: "Adam learning rate"},
	{Name: "batch", Default: strconv.Itoa(DefaultBatch), Usage: "minibatch size (capped at the number of training rows)"},
}

func defaultConfig() config {
	return config{filters: DefaultFilters, kernel: DefaultKernel, pool: DefaultPool, maxPool: true,
		hidden: []int{64},
		train:  nn.Training{Epochs: DefaultEpochs, Patience: DefaultPatience, Tol: DefaultTol, LR: DefaultLR, Batch: DefaultBatch, Valid: nn.DefaultValid}}
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
			// Each pixel is a column of the data: H*W, taken without
			// overflow, is bounded as the columns are.
			if h > MaxPixels/w {
				return 0, 0, framework.Usagef("cnn: option image: %q has more than %d pixels (each pixel is a column of the data)", v, MaxPixels)
			}
			return h, w, nil
		}
	}
	return 0, 0, framework.Usagef("cnn: option image: bad shape %q (want HxW such as 8x8)", v)
}

// MaxPixels bounds an image's H*W (ParseImage): 2^24 pixels, a 4096x4096
// image, far more columns than a data set of rows of them holds.
const MaxPixels = 1 << 24

func parseOptions(opts map[string]string) (config, error) {
	cfg := defaultConfig()
	err := nn.EachOption(opts, func(k, v string) error {
		var err error
		switch k {
		case "image":
			if v != "" && v != "square" {
				cfg.imgH, cfg.imgW, err = ParseImage(v)
			}
		case "filters":
			cfg.filters, err = nn.PositiveInt("cnn", k, v)
		case "kernel":
			cfg.kernel, err = nn.PositiveInt("cnn", k, v)
			if err == nil && cfg.kernel%2 == 0 {
				err = framework.Usagef("cnn: option kernel: %d is even (want an odd size such as 3)", cfg.kernel)
			}
		case "pool":
			cfg.pool, err = nn.PositiveInt("cnn", k, v)
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
			if v != "" && v != "0" && v != "none" {
				cfg.hidden, err = nn.Widths("cnn", k, v, "64")
			} else {
				cfg.hidden = nil
			}
		default:
			if !nn.IsTrainingKey(k) {
				return nn.UnknownOption("cnn", k, optionInfo)
			}
			err = cfg.train.Set("cnn", k, v)
		}
		return err
	})
	if err != nil {
		return config{}, err
	}
	return cfg, nil
}
