package pipeline_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/lazyvi/lazyvi/dataio"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/inference"
	"github.com/lazyvi/lazyvi/measures"
	"github.com/lazyvi/lazyvi/pipeline"
)

// evalData returns 300 training rows and 100 evaluation rows (their
// response shifted by 7, so that a score on any training row would show)
// joined by WithEvalData.
func evalData(t *testing.T) (train, eval, d *dataio.Dataset, part []int) {
	t.Helper()
	train, eval = dataset(300, 1), dataset(100, 2)
	eval.Source = "eval.csv"
	for i := 0; i < 100; i++ {
		eval.X.Set(i, 3, eval.X.At(i, 3)+7)
	}
	d, part, err := pipeline.WithEvalData(train, eval)
	if err != nil {
		t.Fatal(err)
	}
	return train, eval, d, part
}

// directMSE is the meanModel's MSE on eval when trained on train,
// computed from the raw rows: it predicts train's mean response plus
// column a standardised by train's mean and standard deviation.
func directMSE(train, eval *dataio.Dataset) float64 {
	ma, sa := stat.MeanStdDev(mat.Col(nil, 0, train.X), nil)
	my := stat.Mean(mat.Col(nil, 3, train.X), nil)
	n, _ := eval.X.Dims()
	mse := 0.0
	for i := 0; i < n; i++ {
		e := eval.X.At(i, 3) - (my + (eval.X.At(i, 0)-ma)/sa)
		mse += e * e / float64(n)
	}
	return mse
}

// TestEvalDataRun: with evaluation data (WithEvalData's partition), the
// full model learns from the training rows only (standardisation
// included) and every score is on the evaluation rows only: the full
// model's predictions and score equal a direct computation on the raw
// rows, and the report's n_train and n_eval say so, for one run and for
// the ensemble of repetitions.
func TestEvalDataRun(t *testing.T) {
	ctx := context.Background()
	train, eval, d, part := evalData(t)
	cfg := pipeline.Config{Backend: meanBackend{}, BackendName: "mean", Seed: 4, Partition: part}
	p, err := pipeline.Prepare(ctx, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows := slices.Sorted(slices.Values(p.EvalRows))
	if n1, _ := p.XTrain.Dims(); n1 != 300 || len(rows) != 100 || rows[0] != 300 || rows[99] != 399 {
		t.Fatalf("%d train rows, evaluation rows %d..%d (%d); want 300 and 300..399", n1, rows[0], rows[len(rows)-1], len(rows))
	}
	if ma, sa := stat.MeanStdDev(mat.Col(nil, 0, train.X), nil); math.Abs(p.Means[0]-ma) > 1e-12 || math.Abs(p.SDs[0]-sa) > 1e-12 {
		t.Errorf("standardisation %g, %g; want the training rows' %g, %g", p.Means[0], p.SDs[0], ma, sa)
	}
	p.Close()

	want := directMSE(train, eval)
	for _, c := range []struct {
		name    string
		repeats int
		opt     pipeline.EstimateOptions
	}{
		{"one run", 0, pipeline.EstimateOptions{}},
		{"ensemble of 3", 3, pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain, Ensemble: true, Debias: true}}},
	} {
		c.opt.Workers = 1
		cfg := cfg
		cfg.Repeats = c.repeats
		rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), []framework.Estimator{shift{0.5}}, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rep.N != 400 || rep.NTrain != 300 || rep.NEval != 100 || !rep.Partition || rep.CrossFit != 0 {
			t.Errorf("%s: n %d, n_train %d, n_eval %d, partition %v, crossfit %d; want 400, 300, 100, true, 0", c.name, rep.N, rep.NTrain, rep.NEval, rep.Partition, rep.CrossFit)
		}
		if got := -rep.Full.Score; math.Abs(got-want) > 1e-9*want {
			t.Errorf("%s: full model's mse %.12g, the direct computation on the evaluation rows %.12g", c.name, got, want)
		}
	}
}

// TestPartitionFolds: fold numbers (user-defined cross-fitting) make
// fold k's rows the evaluation rows of fold k's models, rows labelled 0
// train in every fold, and the report counts the evaluated rows.
func TestPartitionFolds(t *testing.T) {
	ctx := context.Background()
	d := dataset(200, 3)
	part := make([]int, 200)
	for i := range part {
		part[i] = []int{0, 1, 2, 3}[i%4] // 50 rows train only
	}
	cfg := pipeline.Config{Backend: meanBackend{}, BackendName: "mean", Seed: 2, Partition: part}
	folds, err := pipeline.PrepareFolds(ctx, d, cfg, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, p := range folds {
		for _, r := range p.EvalRows {
			if part[r] != k+1 {
				t.Fatalf("fold %d evaluates row %d of fold %d", k+1, r, part[r])
			}
		}
		if n1, _ := p.XTrain.Dims(); len(p.EvalRows) != 50 || n1 != 150 {
			t.Errorf("fold %d: %d evaluation rows and %d train rows, want 50 and 150", k+1, len(p.EvalRows), n1)
		}
		p.Close()
	}
	rep, err := pipeline.Run(ctx, d, cfg, measures.MSE(), []framework.Estimator{shift{0.5}}, pipeline.EstimateOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.CrossFit != 3 || rep.NEval != 150 || rep.N != 200 {
		t.Errorf("crossfit %d, n_eval %d, n %d; want 3, 150, 200", rep.CrossFit, rep.NEval, rep.N)
	}
	if _, err := pipeline.Prepare(ctx, d, cfg); !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "PrepareFolds") {
		t.Errorf("Prepare with 3 folds: %v, want a usage error pointing to PrepareFolds", err)
	}
}

// TestSplitPartition: a split column's values, train/eval or fold
// numbers, become a partition; anything else is an input error naming the
// file, the row and the column.
func TestSplitPartition(t *testing.T) {
	good := []struct {
		values []string
		want   []int
	}{
		{[]string{"train", "eval", " Train ", "EVAL"}, []int{0, 1, 0, 1}},
		{[]string{"1", "2", "train", "2", "1"}, []int{1, 2, 0, 2, 1}},
	}
	for _, c := range good {
		got, err := pipeline.SplitPartition("d.csv", "split", c.values)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.values, got, err, c.want)
		}
	}
	bad := []struct {
		values []string
		row    int
		want   string
	}{
		{[]string{"train", "test", "eval"}, 3, `"test" is not a split`},
		{[]string{"train", "0", "eval"}, 3, `"0" is not a split`},
		{[]string{"1", "2", "eval"}, 4, "not both"},
		{[]string{"eval", "train", "2"}, 4, "not both"},
		{[]string{"1", "3", "train"}, 0, "fold 2 has no rows"},
		{[]string{"eval", "eval"}, 0, "no training rows"},
		{[]string{"train", "train"}, 0, "no evaluation rows"},
		{[]string{"1", "1", "train"}, 0, "every fold number is 1"},
		// A fold number beyond the rows cannot have every fold present:
		// refused at its row, before anything of its size is allocated.
		{[]string{"1", "1000000000000", "train"}, 3, "fold number 1000000000000 is more than the file's 3 rows"},
		{[]string{"1", "2", "9223372036854775807"}, 4, "is more than the file's 3 rows"},
		{[]string{"1", "9223372036854775808"}, 3, "is not a split"},
	}
	for _, c := range bad {
		_, err := pipeline.SplitPartition("d.csv", "split", c.values)
		var ie *dataio.InputError
		if !errors.As(err, &ie) || ie.File != "d.csv" || ie.Column != "split" || ie.Row != c.row || !strings.Contains(ie.Msg, c.want) {
			t.Errorf("%q: %v; want an input error of d.csv, row %d, column split, saying %q", c.values, err, c.row, c.want)
		}
	}
}

// TestEvalDataErrors: evaluation data with other columns, partitions
// that do not fit the data or the settings, and a pre-trained network
// without held-out rows (or cross-fitted, or repeated) are usage errors
// before any model is trained.
func TestEvalDataErrors(t *testing.T) {
	train := dataset(50, 1)
	other := dataset(20, 2)
	other.Source = "eval.csv"
	other.Names = []string{"a", "c", "const", "y"}
	if _, _, err := pipeline.WithEvalData(train, other); err == nil || !strings.Contains(err.Error(), `eval.csv, column "c": column 2 is "b" in test.csv`) {
		t.Errorf("other columns: %v", err)
	}
	short := dataset(20, 2)
	short.Names, short.X = short.Names[:3], mat.DenseCopyOf(short.X.Slice(0, 20, 0, 3))
	if _, _, err := pipeline.WithEvalData(train, short); err == nil || !strings.Contains(err.Error(), `column "y": no such column`) {
		t.Errorf("a column fewer: %v", err)
	}

	_, _, d, part := evalData(t)
	weights := map[string]string{pipeline.PretrainedOption: "net.pt"}
	five := slices.Clone(part)
	for i := range 200 {
		five[i] = i%2 + 2 // folds 1, 2, 3 (fold 1 the evaluation data)
	}
	for _, c := range []struct {
		name string
		cfg  pipeline.Config
		want string
	}{
		{"labels for other rows", pipeline.Config{Partition: part[:10]}, "Config.Partition has 10 labels for 400 rows"},
		{"a crossfit besides", pipeline.Config{Partition: part, CrossFit: 3}, "Config.CrossFit must be 0 or 1"},
		{"a negative label", pipeline.Config{Partition: append([]int{-1}, part[1:]...)}, "row 1 has label -1"},
		{"a huge label", pipeline.Config{Partition: append([]int{math.MaxInt}, part[1:]...)}, "fold number 9223372036854775807 is more than the 400 rows"},
		{"pretrained, no evaluation rows", pipeline.Config{Options: weights}, "training rows are unknown"},
		{"pretrained, repeated", pipeline.Config{Options: weights, Partition: part, Repeats: 2}, "Config.Repeats must be 1 with a pre-trained network"},
		{"pretrained, cross-fitted", pipeline.Config{Options: weights, Partition: five}, "one network cannot be cross-fitted"},
		{"pretrained, seeded folds", pipeline.Config{Options: weights, TrainedElsewhere: true, CrossFit: 3}, "one network cannot be cross-fitted"},
	} {
		err := pipeline.CheckRun(d, c.cfg, measures.MSE(), pipeline.EstimateOptions{})
		if !errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want a usage error with %q", c.name, err, c.want)
		}
	}
	if err := pipeline.CheckRun(d, pipeline.Config{Options: weights}, measures.MSE(), pipeline.EstimateOptions{}); !errors.Is(err, pipeline.ErrUnknownTraining) {
		t.Errorf("pretrained, no evaluation rows: %v, want ErrUnknownTraining", err)
	}
	for _, cfg := range []pipeline.Config{{Options: weights, Partition: part}, {Options: weights, TrainedElsewhere: true}} {
		if err := pipeline.CheckRun(d, cfg, measures.MSE(), pipeline.EstimateOptions{}); err != nil {
			t.Errorf("pretrained, partition %v, trained elsewhere %v: %v", cfg.Partition != nil, cfg.TrainedElsewhere, err)
		}
	}
}

// TestSavedPartition: a model file records its partition, and is used
// only with the same one.
func TestSavedPartition(t *testing.T) {
	ctx := context.Background()
	_, _, d, part := evalData(t)
	fits := 0
	cfg := pipeline.Config{Backend: savingBackend{&fits}, BackendName: "saving", Seed: 3, Partition: part}
	saved, err := pipeline.TrainModel(ctx, d, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	saved.Source = "m.vimodel"
	other := slices.Clone(part)
	other[0] = 1
	for _, c := range []struct {
		part []int
		want string
	}{
		{part, ""},
		{nil, "trained with explicit evaluation rows"},
		{other, "trained with other explicit evaluation rows"},
	} {
		use := cfg
		use.Partition, use.Saved = c.part, saved
		p, err := pipeline.Prepare(ctx, d, use)
		if p != nil {
			p.Close()
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), "m.vimodel: the model was "+c.want)) {
			t.Errorf("partition %v: %v, want %q", c.part != nil, err, c.want)
		}
	}
}

// TestSavedPartitionRepeated: a model file of the default's repetitions on
// given evaluation rows gives the ensembled run that trains them, bit for
// bit, and trains nothing.
func TestSavedPartitionRepeated(t *testing.T) {
	ctx := context.Background()
	_, _, d, part := evalData(t)
	fits := 0
	cfg := pipeline.Config{Backend: savingBackend{&fits}, BackendName: "saving", Seed: 3, Partition: part, Repeats: 3}
	saved, err := pipeline.TrainModel(ctx, d, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Repetitions() != 3 || saved.PerRepeat() != 1 || fits != 3 {
		t.Fatalf("%d repetitions of %d models saved, %d fitted; want 3 of 1", saved.Repetitions(), saved.PerRepeat(), fits)
	}
	ests := []framework.Estimator{shift{0.5}}
	opt := pipeline.EstimateOptions{InferOptions: inference.InferOptions{Inference: inference.Plain, Ensemble: true, Debias: true}, Workers: 2}
	want, err := pipeline.Run(ctx, d, cfg, measures.MSE(), ests, opt)
	if err != nil {
		t.Fatal(err)
	}
	fits = 0
	use := cfg
	use.Saved = saved
	got, err := pipeline.Run(ctx, d, use, measures.MSE(), ests, opt)
	if err != nil {
		t.Fatal(err)
	}
	if fits != 0 {
		t.Errorf("the run from the model file fitted %d models", fits)
	}
	want.Full.Seconds, got.Full.Seconds = 0, 0
	for i := range want.Results {
		want.Results[i].Seconds, got.Results[i].Seconds = 0, 0
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("the run from the model file differs:\n got %+v\nwant %+v", got, want)
	}
}

// TestEvalDataStrayLabel: evaluation data whose response has a label the
// binary (or multiclass) training rows do not (a 2 among 0/1, or 0.5) is
// an input error naming the evaluation file, its row and the column,
// not a silent switch to another task.
func TestEvalDataStrayLabel(t *testing.T) {
	binary := func(source string, n, classes int) *dataio.Dataset {
		x := mat.NewDense(n, 3, nil)
		for i := 0; i < n; i++ {
			x.SetRow(i, []float64{float64(i), float64(i % 7), float64(i % classes)})
		}
		return &dataio.Dataset{Source: source, Names: []string{"a", "b", "y"}, X: x}
	}
	for _, c := range []struct {
		classes int
		stray   float64
		want    string
	}{
		{2, 2, `ev.csv: row 7, column "y": response 2 is not a class of the training rows (0 and 1, a binary response)`},
		{2, 0.5, `ev.csv: row 7, column "y": response 0.5 is not a class`},
		{3, 3, `ev.csv: row 7, column "y": response 3 is not a class of the training rows (0 to 2, a multiclass response)`},
	} {
		ev := binary("ev.csv", 40, c.classes)
		ev.X.Set(5, 2, c.stray)
		d, part, err := pipeline.WithEvalData(binary("tr.csv", 60, c.classes), ev)
		if err != nil {
			t.Fatal(err)
		}
		err = pipeline.CheckRun(d, pipeline.Config{Partition: part}, nil, pipeline.EstimateOptions{})
		var ie *dataio.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d classes, stray %v: %v, want an input error with %q", c.classes, c.stray, err, c.want)
		}
	}
	// The training data again (a link, a copy) is refused: in-sample.
	same := dataset(60, 1)
	same.Source = "copy.csv"
	if _, _, err := pipeline.WithEvalData(dataset(60, 1), same); err == nil || !strings.Contains(err.Error(), "copy.csv: the evaluation data are the training data (test.csv, the same rows)") || !errors.Is(err, framework.ErrUsage) {
		t.Errorf("the same rows: %v", err)
	}
	// A regression response takes any value in its evaluation rows.
	tr, ev := dataset(60, 1), dataset(30, 2)
	ev.Source = "ev.csv"
	d, part, err := pipeline.WithEvalData(tr, ev)
	if err != nil {
		t.Fatal(err)
	}
	if err := pipeline.CheckRun(d, pipeline.Config{Partition: part}, nil, pipeline.EstimateOptions{}); err != nil {
		t.Errorf("regression: %v", err)
	}
}
