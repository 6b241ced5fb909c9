package torch_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestTrainThenModel: vi train with the plugin writes the nine networks of
// vi estimate's default (three repetitions of three folds) to a model file
// (the plugin's Save), and vi estimate --model loads them (Load) and gives
// the numbers of the default run that trains, bit for bit.
func TestTrainThenModel(t *testing.T) {
	if testing.Short() {
		t.Skip("trains networks in Python")
	}
	requirePython(t)
	dir := t.TempDir()
	bin := viBinary(t, dir)
	d, _ := linear(t, 300, 4)
	data := filepath.Join(dir, "lin.csv")
	writeCSV(t, data, d.Names, d.X)
	plugin := launcher(t)
	common := []string{"--data", data, "--plugin", plugin, "--epochs", "20", "--seed", "3"}
	if stderr, code := viRun(t, bin, dir, append([]string{"train", "--out", "m.vimodel"}, common...)...); code != 0 {
		t.Fatalf("vi train: exit %d\n%s", code, stderr)
	}
	results := func(extra ...string) any {
		t.Helper()
		args := append(append([]string{"estimate", "--estimators", "lazy,dropout", "--format", "json", "--workers", "2"}, common...), extra...)
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("vi %v: %v", args, err)
		}
		var rep struct {
			CrossFit int `json:"crossfit"`
			Repeats  int `json:"repeats"`
			Results  []struct {
				Feature, Estimator string
				VI, SE             float64
				CILow              float64 `json:"ci_low"`
				CIHigh             float64 `json:"ci_high"`
				PValue             float64 `json:"p_value"`
			}
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 12 || rep.CrossFit != 3 || rep.Repeats != 3 {
			t.Fatalf("%d results of %d repetitions of %d folds, want 12 of 3 x 3", len(rep.Results), rep.Repeats, rep.CrossFit)
		}
		return rep.Results
	}
	trained, loaded := results(), results("--model", filepath.Join(dir, "m.vimodel"))
	if !reflect.DeepEqual(trained, loaded) {
		t.Errorf("vi estimate --model differs from the run that trains:\n%v\n%v", loaded, trained)
	}
}
