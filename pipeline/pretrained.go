package pipeline

import "github.com/lazyvi/lazyvi/framework"

// PretrainedOption is the backend option that names a pre-trained full
// model's fitted state (the torch plugin's weights=). A run whose options
// set it builds its full model Pretrained (loaded, not trained) and every
// other model (reduced, retrained) without the option: only the full model
// has every feature the pre-trained network was trained with.
const PretrainedOption = "weights"

// pretrainedSpec is the full model's spec: Pretrained when spec's options
// set PretrainedOption.
func pretrainedSpec(spec framework.ModelSpec) framework.ModelSpec {
	spec.Pretrained = spec.Options[PretrainedOption] != ""
	return spec
}

// othersSpec is the spec of the models other than the full one: spec
// without Pretrained and without PretrainedOption.
func othersSpec(spec framework.ModelSpec) framework.ModelSpec {
	spec.Pretrained = false
	if _, ok := spec.Options[PretrainedOption]; !ok {
		return spec
	}
	opts := make(map[string]string, len(spec.Options))
	for k, v := range spec.Options {
		if k != PretrainedOption {
			opts[k] = v
		}
	}
	spec.Options = opts
	return spec
}
