package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOutputsCheckedFirst: an output that cannot be written (--plot, --out)
// is a usage error naming its own flag before anything is trained, not an
// exit 1 after the whole run; the other flags' messages say what is wrong.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(40))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--plot", "nodir/x.png"}, "vi: --plot nodir/x.png: directory nodir does not exist\n"},
		{[]string{"--plot", "/sys/x.png"}, "vi: --plot /sys/x.png: cannot write in directory /sys: "},
		{[]string{"--out", "/sys/out.json"}, "vi: --out /sys/out.json: cannot write in directory /sys: "},
		{[]string{"--out", "/proc/out.json"}, "vi: --out /proc/out.json: vi makes no new files under /dev or /proc"},
		{[]string{"--out", "."}, "vi: --out .: is a directory"},
		{[]string{"--model", "-"}, "vi: -: a model file is read by its name, not from standard input"},
		{[]string{"--permute-repeats", "1e9", "--estimators", "permute"}, `vi: --permute-repeats must be a whole number from 1 to 1000, got "1e9"`},
	} {
		start := time.Now()
		_, stderr, code := vi(t, dir, append(append([]string{"estimate", "--data", "data.csv"}, fastArgs...), c.args...)...)
		if code != 2 || !strings.HasPrefix(stderr, c.want) || time.Since(start) > 5*time.Second {
			t.Errorf("%v: exit %d after %v, stderr %q; want 2 at once and %q", c.args, code, time.Since(start).Round(time.Millisecond), stderr, c.want)
		}
	}
	checkNoFiles(t, dir, "data.csv")
}

// TestResponseHints: a text response is told once to code its classes,
// not to make one-hot feature columns; vi train with evaluation data says which
// file trained the models.
func TestResponseHints(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "text.csv"), "x1,x2,y\n1,2,high\n2,3,low\n")
	_, stderr, code := vi(t, dir, "estimate", "--data", "text.csv", "--target", "y")
	if code != 2 || strings.Count(stderr, "classes") != 1 || !strings.Contains(stderr, "code a category's classes 0, 1, 2") || strings.Contains(stderr, "onehot") {
		t.Errorf("text response: exit %d, stderr %q", code, stderr)
	}
	lin := strings.Split(strings.TrimSpace(linearCSV(90)), "\n")
	writeFile(t, filepath.Join(dir, "tr.csv"), strings.Join(lin[:61], "\n")+"\n")
	writeFile(t, filepath.Join(dir, "ev.csv"), lin[0]+"\n"+strings.Join(lin[61:], "\n")+"\n")
	_, stderr, code = vi(t, dir, append([]string{"train", "--data", "tr.csv", "--eval-data", "ev.csv", "--out", "m.vimodel", "--repeats", "1"}, fastArgs[:4]...)...)
	if code != 0 || !strings.Contains(stderr, "trained on tr.csv (evaluation rows: ev.csv)") {
		t.Errorf("train --eval-data: exit %d, stderr %q", code, stderr)
	}
	// The evaluation data are the training data: in-sample, refused.
	os.Symlink("tr.csv", filepath.Join(dir, "link.csv"))
	_, stderr, code = vi(t, dir, append([]string{"estimate", "--data", "tr.csv", "--eval-data", "link.csv"}, fastArgs...)...)
	if code != 2 || !strings.Contains(stderr, "link.csv: the evaluation data are the training data (tr.csv, the same rows)") {
		t.Errorf("--eval-data a link to --data: exit %d, stderr %q", code, stderr)
	}
}
