package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/internal/progress"
)

// TestProgressInLog: vi estimate with stderr a file (a log, a Slurm job's
// output) and --format json: plain progress lines, no carriage returns;
// stdout holds the JSON alone.
func TestProgressInLog(t *testing.T) {
	t.Setenv(progress.EnvVar, "")
	old := progress.Interval
	progress.Interval = time.Millisecond
	t.Cleanup(func() { progress.Interval = old })
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "data.csv"), linearCSV(200))
	t.Chdir(dir)
	stderr, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout bytes.Buffer
	args := append([]string{"estimate", "--data", "data.csv", "--estimators", "dropout,retrain", "--format", "json"}, fastArgs...)
	if code := run(args, strings.NewReader(""), &stdout, stderr); code != 0 {
		b, _ := os.ReadFile(stderr.Name())
		t.Fatalf("exit %d: %s", code, b)
	}
	b, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if !strings.Contains(log, "vi: dropout/retrain ") || !strings.Contains(log, " elapsed, eta ") {
		t.Errorf("no plain progress line in the log:\n%s", log)
	}
	if strings.Contains(log, "\r") || strings.Contains(log, "\033") {
		t.Errorf("the log holds a carriage return or an escape:\n%q", log)
	}
	if !strings.HasPrefix(stdout.String(), "{") || strings.Contains(stdout.String(), "elapsed") {
		t.Errorf("stdout is not the JSON alone:\n%s", stdout.String())
	}
}
