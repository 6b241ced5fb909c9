package torch_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/estimators"
	"github.com/lazyvi/lazyvi/estimators/lazy"
	"github.com/lazyvi/lazyvi/framework"
	"github.com/lazyvi/lazyvi/pipeline"
)

// A network trained outside lazyvi (testdata/train_state_dict.py, a user's
// script: the tanh network of testdata/tanh.py trained on another sample of
// the linear setting, its state dict saved with torch.save) is explained
// from its weights: the full model, built Pretrained, loads them and is not
// trained (its predictions are the script's, also when a training column
// is zero in every row), and says so with the architecture it built; other
// models are trained from build; and lazy recovers the truth.
func TestWeights(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network in Python")
	}
	py := python(t)
	dir := t.TempDir()
	train, _ := linear(t, accN, 2)
	trainCSV := filepath.Join(dir, "train.csv")
	writeCSV(t, trainCSV, train.Names, train.X)

	// Rows to predict: 40 rows of features, then the same with x1 zeroed.
	d, truth := linear(t, accN, 1)
	n, cols := d.X.Dims()
	p := cols - 1
	x := mat.DenseCopyOf(d.X.Slice(0, n, 0, p))
	rows := mat.NewDense(80, p, nil)
	rows.Copy(x.Slice(0, 40, 0, p))
	zeroed := mat.DenseCopyOf(x.Slice(0, 40, 0, p))
	for i := 0; i < 40; i++ {
		zeroed.Set(i, 0, 0)
	}
	rows.Slice(40, 80, 0, p).(*mat.Dense).Copy(zeroed)
	xCSV, predCSV := filepath.Join(dir, "x.csv"), filepath.Join(dir, "pred.txt")
	writeCSV(t, xCSV, d.Names[:p], rows)
	weights := filepath.Join(dir, "model.pt")
	cmd := exec.Command(py, abs(t, "train_state_dict.py"), trainCSV, weights, xCSV, predCSV)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("train_state_dict.py: %v\n%s", err, out)
	}
	script := readPreds(t, predCSV)

	b := sharedBackend(t)
	opts := map[string]string{"module": abs(t, "tanh.py"), "weights": weights}
	y := mat.Col(nil, p, d.X)
	predict := func(pretrained bool, fitX, at *mat.Dense) ([]float64, framework.FitReport) {
		t.Helper()
		m, err := b.New(context.Background(), framework.ModelSpec{Task: framework.Regression, Inputs: p, Seed: 1, Options: opts, Pretrained: pretrained})
		if err != nil {
			t.Fatal(err)
		}
		defer framework.Release(m)
		if err := m.Fit(context.Background(), fitX, y); err != nil {
			t.Fatal(err)
		}
		pr, err := m.Predict(context.Background(), at)
		if err != nil {
			t.Fatal(err)
		}
		return mat.Col(nil, 0, pr), framework.FitReportOf(m)
	}
	xz := mat.DenseCopyOf(x)
	for i := 0; i < n; i++ {
		xz.Set(i, 0, 0)
	}
	// The full model: the script's network, not trained again, whatever
	// its training rows hold.
	for _, fitX := range []*mat.Dense{x, xz} {
		full, rep := predict(true, fitX, mat.DenseCopyOf(rows.Slice(0, 40, 0, p)))
		for i, v := range full {
			if math.Abs(v-script[i]) > 1e-12*math.Max(1, math.Abs(v)) {
				t.Fatalf("row %d: the loaded model predicts %v, the script's network %v", i, v, script[i])
			}
		}
		if !rep.Loaded || rep.Epochs != 0 || !strings.Contains(rep.Architecture, "Tanh") || !strings.Contains(rep.Architecture, "parameters") {
			t.Errorf("the loaded model's report: %+v, want loaded, no epochs, the tanh architecture", rep)
		}
	}
	// Another model (x1 zeroed in its training rows): trained from build.
	reduced, rep := predict(false, xz, zeroed)
	if rep.Loaded || rep.Epochs == 0 {
		t.Errorf("the reduced model's report: %+v, want trained", rep)
	}
	same := 0
	for i, v := range reduced {
		if math.Abs(v-script[40+i]) <= 1e-6 {
			same++
		}
	}
	if same > 0 {
		t.Errorf("the reduced model predicts %d of 40 rows as the loaded network does: not trained from build?", same)
	}

	// Trained on another sample: judged on a seeded split of d.
	cfg := pipeline.Config{Backend: b, BackendName: "lazyvi-torch", Seed: 1, Options: opts, TrainedElsewhere: true}
	res := runConfig(t, d, cfg, lazy.Estimator{}, estimators.Dropout{})
	checkTruth(t, res, "lazy", truth)
	checkDropoutBiased(t, res, truth)
}

func writeCSV(t *testing.T, path string, names []string, x *mat.Dense) {
	t.Helper()
	var sb strings.Builder
	sb.WriteString(strings.Join(names, ",") + "\n")
	r, c := x.Dims()
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.FormatFloat(x.At(i, j), 'g', -1, 64))
		}
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readPreds(t *testing.T, path string) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for i, l := range strings.Fields(string(b)) {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatal(fmt.Errorf("%s: line %d: %w", path, i+1, err))
		}
		out = append(out, v)
	}
	return out
}
