package mlp

import (
	"strconv"

	"github.com/lazyvi/lazyvi/backends/internal/nn"
	"github.com/lazyvi/lazyvi/framework"
)

// Defaults of the backend's options; see Backend.Options for their meaning.
const (
	DefaultHidden   = "50"
	DefaultEpochs   = 2000
	DefaultPatience = 20
	DefaultTol      = 1e-4
	DefaultLR       = 1e-3
	DefaultBatch    = 64
)

// config is a parsed ModelSpec.Options.
type config struct {
	hidden []int
	train  nn.Training
}

var optionInfo = []framework.OptionInfo{
	{Name: "hidden", Default: DefaultHidden,
		Usage: "comma-separated widths of the hidden ReLU layers, input side first (\"100,50\")"},
	{Name: "epochs", Default: strconv.Itoa(DefaultEpochs),
		Usage: "maximum number of training epochs (passes over the training set)"},
	{Name: "patience", Default: strconv.Itoa(DefaultPatience),
		Usage: "stop after this many consecutive epochs without a relative improvement of the validation loss (the training loss with valid=0) by more than tol"},
	{Name: "tol", Default: strconv.FormatFloat(DefaultTol, 'g', -1, 64),
		Usage: "relative improvement of the validation loss that counts as progress for early stopping"},
	{Name: "valid", Default: strconv.FormatFloat(nn.DefaultValid, 'g', -1, 64), Usage: nn.ValidUsage},
	{Name: "lr", Default: strconv.FormatFloat(DefaultLR, 'g', -1, 64),
		Usage: "Adam learning rate"},
	{Name: "batch", Default: strconv.Itoa(DefaultBatch),
		Usage: "minibatch size (capped at the number of training rows)"},
}

func defaultConfig() config {
	return config{
		hidden: []int{50},
		train: nn.Training{
			Epochs:   DefaultEpochs,
			Patience: DefaultPatience,
			Tol:      DefaultTol,
			LR:       DefaultLR,
			Batch:    DefaultBatch,
			Valid:    nn.DefaultValid,
		},
	}
}

// parseOptions turns ModelSpec.Options into a config. Unknown keys and bad
// values are usage errors naming the option; keys are taken in sorted
// order.
func parseOptions(opts map[string]string) (config, error) {
	cfg := defaultConfig()
	err := nn.EachOption(opts, func(k, v string) error {
		switch {
		case k == "hidden":
			if v == "" {
				return framework.Usagef("mlp: option hidden: empty (want widths such as \"50\" or \"100,50\")")
			}
			var err error
			cfg.hidden, err = nn.Widths("mlp", k, v, "100,50")
			return err
		case nn.IsTrainingKey(k):
			return cfg.train.Set("mlp", k, v)
		default:
			return nn.UnknownOption("mlp", k, optionInfo)
		}
	})
	if err != nil {
		return config{}, err
	}
	return cfg, nil
}
