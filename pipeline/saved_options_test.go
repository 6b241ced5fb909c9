package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// specBackend wraps a backend and records the options of every model it
// makes, and whether it says it can persist models.
type specBackend struct {
	framework.Backend
	persist bool
	made    *[]map[string]string
}

func (b specBackend) Capabilities() framework.Capabilities {
	c := b.Backend.Capabilities()
	c.Persist = b.persist
	return c
}

func (b specBackend) New(ctx context.Context, spec framework.ModelSpec) (framework.Model, error) {
	*b.made = append(*b.made, spec.Options)
	return b.Backend.New(ctx, spec)
}

// TestSavedModelOptionsChecked: a model file whose fold names options other
// than the run's (a crafted file: the checksum proves integrity, not
// origin), or chose a candidate the run does not have, is refused before
// any model is made; so is a model file given to a backend that cannot
// load saved models.
func TestSavedModelOptionsChecked(t *testing.T) {
	ctx := context.Background()
	d := dataset(200, 5)
	fits := 0
	var made []map[string]string
	be := specBackend{Backend: savingBackend{&fits}, persist: true, made: &made}
	cfg := pipeline.Config{Backend: be, BackendName: "saving", Seed: 3, Options: map[string]string{"k": "v"}}
	saved, err := pipeline.TrainModel(ctx, d, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	saved.Source = "m.vimodel"
	ests := []framework.Estimator{shift{0.5}}
	opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Split}, Workers: 2}

	run := func(what string, cfg pipeline.Config, want string) {
		t.Helper()
		made = nil
		_, err := pipeline.Run(ctx, d, cfg, measures.MSE(), ests, opt)
		if err == nil || !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want a usage error with %q", what, err, want)
		}
		if len(made) != 0 {
			t.Errorf("%s: the backend made models with options %v before the refusal", what, made)
		}
	}

	crafted := *saved
	crafted.Folds = append([]dataio.SavedFold(nil), saved.Folds...)
	crafted.Folds[0].Options = map[string]string{"k": "v", "module": "evil.py"}
	withCrafted := cfg
	withCrafted.Saved = &crafted
	run("fold options", withCrafted, "fold 1 was trained with backend options")

	chose := *saved
	chose.Folds = append([]dataio.SavedFold(nil), saved.Folds...)
	chose.Folds[0].Chosen = "(100)"
	withChose := cfg
	withChose.Saved = &chose
	run("chosen candidate", withChose, `chose candidate "(100)"`)

	noPersist := cfg
	noPersist.Backend = specBackend{Backend: savingBackend{&fits}, persist: false, made: &made}
	noPersist.Saved = saved
	run("no persist", noPersist, "backend saving cannot load saved models")

	// The untouched file still runs, with the run's options.
	made = nil
	ok := cfg
	ok.Saved = saved
	if _, err := pipeline.Run(ctx, d, ok, measures.MSE(), ests, opt); err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 || made[0]["k"] != "v" || len(made[0]) != 1 {
		t.Errorf("the saved model was made with options %v, want [map[k:v]]", made)
	}
}
