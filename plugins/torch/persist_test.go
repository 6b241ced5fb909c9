package torch_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestTrainThenModel: vi train with the plugin writes its network to a
// model file (the plugin's Save), and vi estimate --model loads it (Load)
// and gives the numbers of the run that trains, bit for bit.
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
		args := append(append([]string{"estimate", "--repeats", "1", "--estimators", "lazy,dropout", "--format", "json", "--workers", "2"}, common...), extra...)
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("vi %v: %v", args, err)
		}
		var rep struct {
			Results []struct {
				Feature, Estimator string
				VI, SE             float64
				PValue             float64 `json:"p_value"`
			}
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 12 {
			t.Fatalf("%d results, want 12", len(rep.Results))
		}
		return rep.Results
	}
	trained, loaded := results(), results("--model", filepath.Join(dir, "m.vimodel"))
	if !reflect.DeepEqual(trained, loaded) {
		t.Errorf("vi estimate --model differs from the run that trains:\n%v\n%v", loaded, trained)
	}
}
