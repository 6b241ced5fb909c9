package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/dataio"
)

// evalReport is what the evaluation-data tests read of a JSON report.
type evalReport struct {
	N, NTrain, NEval int
	CrossFit         int  `json:"crossfit"`
	Repeats          int  `json:"repeats"`
	Partition        bool `json:"partition"`
	Full             struct {
		Score float64 `json:"score"`
	} `json:"full"`
	Results []struct {
		Feature, Estimator string
		VI, SE             float64
		PValue             float64 `json:"p_value"`
	} `json:"results"`
}

func (r *evalReport) UnmarshalJSON(b []byte) error {
	type plain evalReport
	var aux struct {
		plain
		NTrain int `json:"n_train"`
		NEval  int `json:"n_eval"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*r = evalReport(aux.plain)
	r.NTrain, r.NEval = aux.NTrain, aux.NEval
	return nil
}

func readEvalReport(t *testing.T, out string) evalReport {
	t.Helper()
	var r evalReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

// evalFiles writes tr.csv (300 rows of the linear setting) and te.csv
// (150 other rows) into a new directory, and returns it.
func evalFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	viOK(t, dir, "simulate", "--setting", "linear", "--n", "300", "--seed", "1", "--out", "tr.csv")
	viOK(t, dir, "simulate", "--setting", "linear", "--n", "150", "--seed", "2", "--out", "te.csv")
	return dir
}

// TestEvalDataScoresEvalRows: with --eval-data the full model learns from
// --data's rows and is scored on the evaluation file's only: the linear
// backend's mse is the least-squares fit of tr.csv, computed here, scored
// on te.csv; n_train and n_eval are the files' rows, for one run and for
// the default (repetitions on the same rows).
func TestEvalDataScoresEvalRows(t *testing.T) {
	dir := evalFiles(t)
	ctx := context.Background()
	tr, err := dataio.LoadCSV(ctx, filepath.Join(dir, "tr.csv"))
	if err != nil {
		t.Fatal(err)
	}
	te, err := dataio.LoadCSV(ctx, filepath.Join(dir, "te.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := olsMSE(t, tr, te)
	for _, extra := range [][]string{{"--repeats", "1"}, nil} {
		args := append([]string{"estimate", "--data", "tr.csv", "--eval-data", "te.csv", "--backend", "linear", "--estimators", "dropout", "--format", "json"}, extra...)
		r := readEvalReport(t, viOK(t, dir, args...))
		if r.N != 450 || r.NTrain != 300 || r.NEval != 150 || !r.Partition || r.CrossFit != 0 {
			t.Errorf("%v: n %d, n_train %d, n_eval %d, partition %v, crossfit %d; want 450, 300, 150, true, 0", extra, r.N, r.NTrain, r.NEval, r.Partition, r.CrossFit)
		}
		if got := -r.Full.Score; math.Abs(got-want) > 1e-9*want {
			t.Errorf("%v: the full model's mse %.12g, least squares on tr.csv scored on te.csv %.12g", extra, got, want)
		}
		if wantRep := map[bool]int{true: 0, false: 3}[extra != nil]; r.Repeats != wantRep {
			t.Errorf("%v: repeats %d, want %d", extra, r.Repeats, wantRep)
		}
	}
}

// olsMSE fits least squares with an intercept to train's rows (the
// response last) and returns its mean squared error on eval's.
func olsMSE(t *testing.T, train, eval *dataio.Dataset) float64 {
	t.Helper()
	design := func(d *dataio.Dataset) (*mat.Dense, *mat.VecDense) {
		n, c := d.X.Dims()
		x := mat.NewDense(n, c, nil)
		y := mat.NewVecDense(n, nil)
		for i := 0; i < n; i++ {
			x.Set(i, 0, 1)
			for j := 0; j < c-1; j++ {
				x.Set(i, j+1, d.X.At(i, j))
			}
			y.SetVec(i, d.X.At(i, c-1))
		}
		return x, y
	}
	x, y := design(train)
	var beta mat.VecDense
	if err := beta.SolveVec(x, y); err != nil {
		t.Fatal(err)
	}
	xe, ye := design(eval)
	var pred mat.VecDense
	pred.MulVec(xe, &beta)
	pred.SubVec(&pred, ye)
	n, _ := xe.Dims()
	return mat.Dot(&pred, &pred) / float64(n)
}

// joinWithSplit writes name: the rows of tr.csv then te.csv, with a first
// column "part" holding label(i, fromEval) for each row.
func joinWithSplit(t *testing.T, dir, name string, label func(i int, eval bool) string) {
	t.Helper()
	var sb strings.Builder
	for k, f := range []string{"tr.csv", "te.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if k == 0 {
			sb.WriteString("part," + lines[0] + "\n")
		}
		for i, l := range lines[1:] {
			sb.WriteString(label(i, k == 1) + "," + l + "\n")
		}
	}
	writeFile(t, filepath.Join(dir, name), sb.String())
}

// TestSplitColumn: --split-column with train/eval gives the numbers of
// --eval-data on the same rows (the column is not a feature); with fold
// numbers it cross-fits the user's folds, every row evaluated once.
func TestSplitColumn(t *testing.T) {
	dir := evalFiles(t)
	joinWithSplit(t, dir, "split.csv", func(_ int, eval bool) string {
		if eval {
			return "eval"
		}
		return "train"
	})
	joinWithSplit(t, dir, "folds.csv", func(i int, _ bool) string { return []string{"1", "2", "3"}[i%3] })
	common := []string{"--hidden", "8", "--epochs", "40", "--estimators", "dropout,lazy", "--repeats", "1", "--format", "json", "--workers", "2"}
	explicit := readEvalReport(t, viOK(t, dir, append([]string{"estimate", "--data", "tr.csv", "--eval-data", "te.csv"}, common...)...))
	column := readEvalReport(t, viOK(t, dir, append([]string{"estimate", "--data", "split.csv", "--split-column", "part"}, common...)...))
	if !reflect.DeepEqual(explicit, column) {
		t.Errorf("--split-column differs from --eval-data on the same rows:\n%+v\n%+v", column, explicit)
	}
	if len(column.Results) != 12 || column.NEval != 150 {
		t.Errorf("%d results, n_eval %d; want 12 (6 features, no part), 150", len(column.Results), column.NEval)
	}
	folds := readEvalReport(t, viOK(t, dir, append([]string{"estimate", "--data", "folds.csv", "--split-column", "part"}, common...)...))
	if folds.CrossFit != 3 || folds.NEval != 450 || folds.N != 450 || folds.NTrain != 300 {
		t.Errorf("fold numbers: crossfit %d, n %d, n_train %d, n_eval %d; want 3, 450, 300, 450", folds.CrossFit, folds.N, folds.NTrain, folds.NEval)
	}
}

// TestEvalDataErrors: every misuse of the evaluation flags, bad split
// values, and a loaded network (--opt weights=) without held-out rows, or
// cross-fitted or repeated, is one line on stderr naming what is wrong,
// exit 2, before any backend starts.
func TestEvalDataErrors(t *testing.T) {
	dir := evalFiles(t)
	b, err := os.ReadFile(filepath.Join(dir, "te.csv"))
	if err != nil {
		t.Fatal(err)
	}
	te := string(b)
	writeFile(t, filepath.Join(dir, "renamed.csv"), strings.Replace(te, "x2", "z2", 1))
	lines := strings.SplitN(te, "\n", 3)
	cells := strings.Split(lines[1], ",")
	cells[0] = "1e200"
	writeFile(t, filepath.Join(dir, "huge.csv"), lines[0]+"\n"+strings.Join(cells, ",")+"\n"+lines[2])
	joinWithSplit(t, dir, "bad.csv", func(i int, eval bool) string {
		if i == 3 && !eval {
			return "tst"
		}
		return map[bool]string{true: "eval", false: "train"}[eval]
	})
	joinWithSplit(t, dir, "folds.csv", func(i int, _ bool) string { return []string{"1", "2"}[i%2] })
	w := []string{"--opt", "weights=net.pt"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"estimate", "--data", "tr.csv", "--eval-data", "renamed.csv"}, `renamed.csv, column "z2": column 2 is "x2" in tr.csv`},
		{[]string{"estimate", "--data", "tr.csv", "--eval-data", "huge.csv"}, `huge.csv: row 2, column "x1": 1e+200 is too large`},
		{[]string{"estimate", "--data", "tr.csv", "--eval-data", "missing.csv"}, "missing.csv: no such file"},
		{[]string{"estimate", "--eval-data", "te.csv"}, "--eval-data and --split-column need --data"},
		{[]string{"estimate", "--data", "bad.csv", "--split-column", "part", "--eval-data", "te.csv"}, "--eval-data and --split-column exclude each other"},
		{[]string{"estimate", "--data", "tr.csv", "--split-column", "part"}, `tr.csv, column "part": no such column`},
		{[]string{"estimate", "--data", "bad.csv", "--split-column", "part"}, `bad.csv: row 5, column "part": "tst" is not a split`},
		{[]string{"estimate", "--data", "bad.csv", "--split-column", "y", "--target", "y"}, "--split-column y is the --target"},
		{[]string{"estimate", "--data", "tr.csv", "--eval-data", "te.csv", "--crossfit", "3"}, "--crossfit and --eval-data exclude each other"},
		{[]string{"estimate", "--data", "tr.csv", "--eval-data", "te.csv", "--train-frac", "0.5"}, "--train-frac and --eval-data exclude each other"},
		{[]string{"shapley", "--data", "folds.csv", "--split-column", "part"}, "vi shapley uses one train/evaluation split"},
		{[]string{"roar", "--data", "tr.csv", "--eval-data", "te.csv", "--train-frac", "0.5"}, "--train-frac and --eval-data exclude each other"},
		{[]string{"bench", "data", "--data", "tr.csv", "--eval-data", "renamed.csv"}, `renamed.csv, column "z2"`},
		{[]string{"estimate", "--data", "tr.csv", "--trained-elsewhere"}, "--trained-elsewhere says where a loaded network"},
		{append([]string{"estimate", "--data", "tr.csv"}, w...), "give rows it never saw with --eval-data FILE or --split-column COL, or --trained-elsewhere"},
		{append([]string{"train", "--data", "tr.csv", "--out", "m.vimodel"}, w...), "--trained-elsewhere"},
		{append([]string{"estimate", "--data", "tr.csv", "--eval-data", "te.csv", "--repeats", "3"}, w...), "every repetition would judge the same loaded network"},
		{append([]string{"estimate", "--data", "tr.csv", "--trained-elsewhere", "--crossfit", "3"}, w...), "one loaded network cannot be cross-fitted"},
		{append([]string{"estimate", "--data", "tr.csv", "--trained-elsewhere", "--ensemble"}, w...), "--ensemble and --opt weights= exclude each other"},
		{append([]string{"estimate", "--data", "folds.csv", "--split-column", "part"}, w...), "--split-column part has fold numbers, but one loaded network"},
	} {
		stdout, stderr, code := vi(t, dir, c.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("vi %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

// TestTrainEvalData: vi train with --eval-data records the evaluation
// rows in the model file, with the default's three repetitions on them;
// vi estimate --model uses it with the same --eval-data, giving exactly
// the report of the run that trains, the same with the backend served from
// a subprocess (--backend-process), and refuses it without.
func TestTrainEvalData(t *testing.T) {
	dir := evalFiles(t)
	model := []string{"--hidden", "8", "--epochs", "30"}
	viOK(t, dir, append([]string{"train", "--data", "tr.csv", "--eval-data", "te.csv", "--out", "m.vimodel"}, model...)...)
	est := append([]string{"estimate", "--data", "tr.csv", "--eval-data", "te.csv", "--estimators", "dropout", "--format", "json"}, model...)
	loaded := viOK(t, dir, append(est, "--model", "m.vimodel")...)
	r := readEvalReport(t, loaded)
	if r.NTrain != 300 || r.NEval != 150 {
		t.Errorf("n_train %d, n_eval %d; want 300, 150", r.NTrain, r.NEval)
	}
	if trained := viOK(t, dir, est...); stripSeconds([]byte(loaded)) != stripSeconds([]byte(trained)) || !strings.Contains(trained, `"repeats": 3`) {
		t.Errorf("estimate --model differs from the run that trains, or is not the default's 3 repetitions:\n%s\n---\n%s", loaded, trained)
	}
	// The loaded model's backend served from a subprocess gives the same
	// report, lazy's kernels and products crossing the plugin protocol.
	lazyEst := append([]string{"estimate", "--data", "tr.csv", "--eval-data", "te.csv", "--model", "m.vimodel", "--estimators", "lazy", "--format", "json"}, model...)
	inProcess := viOK(t, dir, lazyEst...)
	if served := viOK(t, dir, append(lazyEst, "--backend-process")...); stripSeconds([]byte(served)) != stripSeconds([]byte(inProcess)) {
		t.Errorf("estimate --model --backend-process differs from the run in process:\n%s\n---\n%s", served, inProcess)
	}
	_, stderr, code := vi(t, dir, "estimate", "--data", "tr.csv", "--model", "m.vimodel", "--estimators", "dropout")
	if code != 2 || !strings.Contains(stderr, "m.vimodel: the model was trained with explicit evaluation rows") {
		t.Errorf("--model without --eval-data: exit %d, stderr %q", code, stderr)
	}
}
