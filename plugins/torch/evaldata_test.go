package torch_test

import (
	"encoding/json"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalDataLoadedNetwork: a user's own network, trained outside lazyvi
// on TRAIN.csv alone (testdata/train_state_dict.py: the tanh network, 2000
// rows of the linear setting with three null features), loaded with
// --opt module= --opt weights= and judged with --eval-data on 1000 other
// rows through the vi binary: the nulls are not rejected, x1..x3 are
// within max(3 se, 10%) of the truth, and n_train/n_eval say which rows
// did what. Without evaluation rows the run is refused (exit 2, one line),
// and so are repetitions of the one loaded network.
func TestEvalDataLoadedNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network in Python and runs lazy through the plugin")
	}
	py := python(t)
	dir := t.TempDir()
	bin := viBinary(t, dir)
	train, _ := linear(t, accN, 11)
	test, truth := linear(t, 1000, 12)
	trainCSV, testCSV := filepath.Join(dir, "train.csv"), filepath.Join(dir, "test.csv")
	writeCSV(t, trainCSV, train.Names, train.X)
	writeCSV(t, testCSV, test.Names, test.X)
	weights := filepath.Join(dir, "mine.pt")
	if out, err := exec.Command(py, abs(t, "train_state_dict.py"), trainCSV, weights).CombinedOutput(); err != nil {
		t.Fatalf("train_state_dict.py: %v\n%s", err, out)
	}
	common := []string{"--plugin", launcher(t), "--plugin-timeout", startTimeout.String(),
		"--opt", "module=" + abs(t, "tanh.py"), "--opt", "weights=" + weights, "--estimators", "lazy", "--seed", "1"}

	// Refused: no rows held out from the network's training, and
	// repetitions of one network.
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no evaluation rows", []string{"estimate", "--data", trainCSV}, "--trained-elsewhere"},
		{"repetitions", []string{"estimate", "--data", trainCSV, "--eval-data", testCSV, "--repeats", "3"}, "every repetition would judge the same loaded network"},
	} {
		stderr, code := viRun(t, bin, dir, append(c.args, common...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", c.name, code, stderr, c.want)
		}
	}

	args := append([]string{"estimate", "--data", trainCSV, "--eval-data", testCSV, "--format", "json", "--workers", "2"}, common...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("vi %s: %v", strings.Join(args, " "), err)
	}
	var rep struct {
		NTrain int  `json:"n_train"`
		NEval  int  `json:"n_eval"`
		Part   bool `json:"partition"`
		Full   struct {
			Loaded bool `json:"loaded"`
		} `json:"full"`
		Results []struct {
			Feature string
			VI, SE  float64
			PValue  float64 `json:"p_value"`
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.NTrain != accN || rep.NEval != 1000 || !rep.Part || !rep.Full.Loaded {
		t.Errorf("n_train %d, n_eval %d, partition %v, loaded %v; want %d, 1000, true, true", rep.NTrain, rep.NEval, rep.Part, rep.Full.Loaded, accN)
	}
	if len(rep.Results) != 6 {
		t.Fatalf("%d results, want 6", len(rep.Results))
	}
	for j, r := range rep.Results {
		t.Logf("lazy %s vi %.4f se %.4f p %.3g (truth %.4f)", r.Feature, r.VI, r.SE, r.PValue, truth[j])
		if truth[j] == 0 {
			if r.PValue < 0.025 {
				t.Errorf("null %s rejected: vi %.4f (se %.4f), p %.3g", r.Feature, r.VI, r.SE, r.PValue)
			}
			continue
		}
		if d := math.Abs(r.VI - truth[j]); !(d <= math.Max(3*r.SE, 0.1*truth[j])) {
			t.Errorf("%s: vi %.4f (se %.4f), want %.4f within max(3 se, 10%%)", r.Feature, r.VI, r.SE, truth[j])
		}
	}
}
