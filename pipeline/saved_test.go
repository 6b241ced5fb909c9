package pipeline_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// savingBackend's models are meanModels that save their mean, and count
// their fits.
type savingBackend struct{ fits *int }

func (savingBackend) Capabilities() framework.Capabilities {
	return framework.Capabilities{Persist: true}
}
func (savingBackend) Options() []framework.OptionInfo { return nil }
func (b savingBackend) New(context.Context, framework.ModelSpec) (framework.Model, error) {
	return &savingModel{countingModel{fits: b.fits}}, nil
}

// savingModel is a countingModel (check_test.go) with a state.
type savingModel struct{ countingModel }

func (m *savingModel) SaveState(context.Context) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(m.mean)), nil
}

func (m *savingModel) LoadState(_ context.Context, b []byte) error {
	if len(b) != 8 {
		return framework.Usagef("bad state")
	}
	m.mean = math.Float64frombits(binary.LittleEndian.Uint64(b))
	return nil
}

// TestSavedModelRun: a run from saved models (written and read back as a
// model file) trains nothing and gives the report of the run that trained
// them, single split and cross-fitted, once and repeated (with the
// default's ensemble and debiased paired estimate too); models used with
// other data or settings are an input error naming the file and the
// setting.
func TestSavedModelRun(t *testing.T) {
	ctx := context.Background()
	d := dataset(200, 5)
	split := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Split}, Workers: 2}
	ensemble := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain, Ensemble: true, Debias: true}, Workers: 2}
	for _, c := range []struct {
		crossfit, repeats int
		opt               pipeline.EstimateOptions
	}{{0, 1, split}, {3, 1, split}, {0, 2, split}, {3, 3, split}, {3, 3, ensemble}} {
		crossfit, repeats := c.crossfit, c.repeats
		fits := 0
		cfg := pipeline.Config{Backend: savingBackend{&fits}, BackendName: "saving", Seed: 3, CrossFit: crossfit, Repeats: repeats}
		saved, err := pipeline.TrainModel(ctx, d, cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(saved.Folds) != max(crossfit, 1)*repeats || fits != len(saved.Folds) {
			t.Fatalf("crossfit %d repeats %d: %d models saved, %d fitted", crossfit, repeats, len(saved.Folds), fits)
		}
		var buf bytes.Buffer
		if err := dataio.WriteModel(&buf, saved); err != nil {
			t.Fatal(err)
		}
		read, err := dataio.ReadModel(&buf, "m.vimodel")
		if err != nil {
			t.Fatal(err)
		}
		ests := []framework.Estimator{shift{0.5}}
		opt := c.opt
		fits = 0
		want, err := pipeline.Run(ctx, d, cfg, measures.MSE(), ests, opt)
		if err != nil {
			t.Fatal(err)
		}
		trained := fits
		fits = 0
		withModel := cfg
		withModel.Saved = read
		got, err := pipeline.Run(ctx, d, withModel, measures.MSE(), ests, opt)
		if err != nil {
			t.Fatal(err)
		}
		if fits != 0 || trained == 0 {
			t.Errorf("crossfit %d repeats %d: the run from the model file fitted %d models (the training run %d), want none", crossfit, repeats, fits, trained)
		}
		want.Full.Seconds, got.Full.Seconds = 0, 0
		for i := range want.Results {
			want.Results[i].Seconds, got.Results[i].Seconds = 0, 0
		}
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if !bytes.Equal(wj, gj) {
			t.Errorf("crossfit %d repeats %d: the run from the model file differs:\n got %s\nwant %s", crossfit, repeats, gj, wj)
		}

		other := dataset(200, 6)
		for _, c := range []struct {
			name string
			d    *dataio.Dataset
			edit func(*pipeline.Config)
			want string
		}{
			{"data", other, func(*pipeline.Config) {}, "trained on other data than test.csv"},
			{"seed", d, func(c *pipeline.Config) { c.Seed = 4 }, "Config.Seed"},
			{"backend", d, func(c *pipeline.Config) { c.BackendName = "mlp" }, "Config.BackendName"},
			{"options", d, func(c *pipeline.Config) { c.Options = map[string]string{"k": "v"} }, "Config.Options"},
			{"crossfit", d, func(c *pipeline.Config) { c.CrossFit = 5 - crossfit }, "Config.CrossFit"},
			{"repeats", d, func(c *pipeline.Config) { c.Repeats = repeats%2 + 1 }, "Config.Repeats"},
			{"target", d, func(c *pipeline.Config) { c.Target = "b" }, "Config.Target"},
		} {
			bad := withModel
			c.edit(&bad)
			_, err := pipeline.Run(ctx, c.d, bad, measures.MSE(), ests, opt)
			if err == nil || !errors.Is(err, framework.ErrUsage) || !strings.HasPrefix(err.Error(), "m.vimodel: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("crossfit %d repeats %d, other %s: err %v, want an input error on m.vimodel with %q", crossfit, repeats, c.name, err, c.want)
			}
		}
	}
	if crossfit := 0; crossfit == 0 {
		fits := 0
		cfg := pipeline.Config{Backend: savingBackend{&fits}, BackendName: "saving", Seed: 3, TrainFrac: 0.5}
		saved, _ := pipeline.TrainModel(ctx, d, cfg, 1)
		saved.Source = "m.vimodel"
		cfg.TrainFrac = 0.6
		cfg.Saved = saved
		if _, err := pipeline.Prepare(ctx, d, cfg); err == nil || !strings.Contains(err.Error(), "Config.TrainFrac") {
			t.Errorf("other train share: err %v", err)
		}
	}
}

// TestTrainModelNeedsPersist: a backend without Persist cannot save.
func TestTrainModelNeedsPersist(t *testing.T) {
	ctx := context.Background()
	d := dataset(100, 1)
	cfg := pipeline.Config{Backend: meanBackend{}, BackendName: "mean", Seed: 1}
	if _, err := pipeline.TrainModel(ctx, d, cfg, 1); err == nil || !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "cannot save") {
		t.Errorf("err %v, want a usage error saying the backend cannot save", err)
	}
}
