// Command custom-backend is a worked example of bringing your own
// architecture to lazyvi: a two-layer tanh network, written from scratch
// here, served as a backend plugin. Build it and name it with --plugin:
//
//	go build -o tanhnet ./examples/custom-backend
//	vi estimate --data lin.csv --plugin ./tanhnet --estimators lazy,dropout
//
// The network is h(x) = c + sum_k v_k tanh(w_k . x + b_k) (through a sigmoid
// for a 0/1 response), trained by full-batch Adam on the mean squared error
// (of the standardised response) or the log-loss. Because it implements
// framework.Gradienter (NumParams, Jacobian, PredictShifted), lazy works on
// it; dropout and retrain need only Fit and Predict.
//
// Run by hand, the binary says that it is a plugin and exits: lazyvi starts
// it with the go-plugin handshake. It must write nothing to stdout.
package main

import (
	"context"
	"strconv"

	"github.com/lazyvi/lazyvi/backendplugin"
	"github.com/lazyvi/lazyvi/framework"
)

func main() {
	backendplugin.Serve(Backend{})
}

// Backend builds tanh networks. Its capabilities tell lazyvi that the models
// are Gradienters (so lazy may run) and handle a 0/1 response.
type Backend struct{}

func (Backend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Gradients: true, Classification: true}
}

func (Backend) Options() []framework.OptionInfo {
	return []framework.OptionInfo{
		{Name: "hidden", Default: "16", Usage: "number of tanh units"},
		{Name: "epochs", Default: "800", Usage: "full-batch Adam steps"},
		{Name: "lr", Default: "0.02", Usage: "Adam learning rate"},
	}
}

// New checks the options (errors wrapping framework.ErrUsage reach the
// user as usage errors, exit code 2) and returns an untrained network.
func (Backend) New(_ context.Context, spec framework.ModelSpec) (framework.Model, error) {
	if spec.Inputs < 1 {
		return nil, framework.Usagef("tanhnet: need at least one input, got %d", spec.Inputs)
	}
	if spec.Task != framework.Regression && spec.Task != framework.Binary {
		return nil, framework.Usagef("tanhnet: unsupported task %v", spec.Task)
	}
	n := &Net{task: spec.Task, p: spec.Inputs, seed: spec.Seed, hidden: 16, epochs: 800, lr: 0.02}
	for k, v := range spec.Options {
		var err error
		switch k {
		case "hidden":
			n.hidden, err = strconv.Atoi(v)
			if err == nil && n.hidden < 1 {
				err = strconv.ErrRange
			}
		case "epochs":
			n.epochs, err = strconv.Atoi(v)
			if err == nil && n.epochs < 1 {
				err = strconv.ErrRange
			}
		case "lr":
			n.lr, err = strconv.ParseFloat(v, 64)
			if err == nil && !(n.lr > 0) {
				err = strconv.ErrRange
			}
		default:
			return nil, framework.Usagef("tanhnet: unknown option %q (options: hidden, epochs, lr)", k)
		}
		if err != nil {
			return nil, framework.Usagef("tanhnet: option %s: bad value %q", k, v)
		}
	}
	return n, nil
}
