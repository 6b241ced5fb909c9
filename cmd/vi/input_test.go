package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scaledCSV is linearCSV(n) with column x2 multiplied by 10^exp (written
// with an exponent, as a spreadsheet would).
func scaledCSV(n, exp int) string {
	lines := strings.Split(strings.TrimSpace(linearCSV(n)), "\n")
	for i := 1; i < len(lines); i++ {
		f := strings.Split(lines[i], ",")
		f[1] += fmt.Sprintf("e%d", exp)
		lines[i] = strings.Join(f, ",")
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestBadInputBeforeAnyFit: input, flags and data that cannot work fail
// with exit code 2 and one line naming what is wrong, before the first fit
// (so fast, and with no OUT.partial nor advice to resume from one).
func TestBadInputBeforeAnyFit(t *testing.T) {
	good := linearCSV(40)
	for _, tc := range []struct {
		name string
		cmd  string
		csv  string
		args []string
		want []string
	}{
		{"lambda NaN", "estimate", good, []string{"--lambda", "NaN"}, []string{"--lambda must be >= 0", "NaN"}},
		{"lambda +Inf", "estimate", good, []string{"--lambda", "+Inf"}, []string{"--lambda", "+Inf"}},
		{"shapley lambda NaN", "shapley", good, []string{"--lambda", "NaN"}, []string{"--lambda", "NaN"}},
		{"roar lambda NaN", "roar", good, []string{"--lambda", "NaN"}, []string{"--lambda", "NaN"}},
		{"10 rows, split inference", "estimate", linearCSV(10), []string{"--repeats", "1"},
			[]string{"data.csv: 10 rows are too few", "split inference needs at least 4 evaluation rows"}},
		{"crossfit folds vs rows", "estimate", linearCSV(12), []string{"--crossfit", "7"}, []string{"data.csv", "12 rows are too few for 7 cross-fitting folds"}},
		{"group of an unknown column", "estimate", good, []string{"--groups", "g=x1,x9"}, []string{`group "g": no column "x9"`}},
		{"feature at 1e200", "estimate", scaledCSV(40, 200), nil, []string{"data.csv: row 2", `column "x2"`, "too large", "rescale"}},
		{"feature at 1e200, json", "estimate", scaledCSV(40, 200), []string{"--format", "json"}, []string{"data.csv: row 2", `column "x2"`, "too large"}},
		{"feature near 1e308", "estimate", scaledCSV(40, 307), nil, []string{"data.csv", `column "x2"`, "too large"}},
		{"shapley, feature at 1e200", "shapley", scaledCSV(40, 200), nil, []string{"data.csv", `column "x2"`, "too large"}},
		{"digit separator", "estimate", "a,b,y\n1_000,2,3\n", nil, []string{"data.csv: row 2", `column "a"`, `"1_000"`, "separators"}},
		{"hexadecimal", "estimate", "a,b,y\n1,0x1p-2,3\n", nil, []string{"data.csv: row 2", `column "b"`, `"0x1p-2"`, "hexadecimal"}},
		{"huge bad cell", "estimate", "a,b,y\n1,2," + strings.Repeat("z", 2<<20) + "\n", nil, []string{"data.csv: row 2", `column "y"`, "(2097152 bytes)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "data.csv"), tc.csv)
			args := append([]string{tc.cmd, "--data", "data.csv", "--out", "out.txt"}, tc.args...)
			args = append(args, "--epochs", "5", "--hidden", "8", "--workers", "1")
			stdout, stderr, code := vi(t, dir, args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit code %d (stdout %q), want 2; stderr:\n%.500s", code, stdout, stderr)
			}
			if !strings.HasPrefix(stderr, "vi: ") || strings.Count(stderr, "\n") != 1 || len(stderr) > 600 {
				t.Errorf("stderr is not one short line \"vi: ...\": %.700q", stderr)
			}
			for _, w := range append(tc.want, "") {
				if !strings.Contains(stderr, w) {
					t.Errorf("error %.500q does not mention %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "partial") || strings.Contains(stderr, "resume") {
				t.Errorf("error advises a resume that cannot help: %q", stderr)
			}
			checkNoFiles(t, dir, "data.csv")
		})
	}
}

// TestBenchLambdaNaN: vi bench checks --lambda as the other commands do
// (through lazy's settings).
func TestBenchLambdaNaN(t *testing.T) {
	_, stderr, code := vi(t, t.TempDir(), "bench", "highdim", "--lambda", "NaN")
	if code != 2 || !strings.Contains(stderr, "--lambda must be >= 0") {
		t.Errorf("exit code %d, stderr %q; want 2 and the --lambda error", code, stderr)
	}
}

// TestOutNeverOverwritesInput: --out (and --plot) naming an input file, by
// any name, is a usage error and leaves the input as it was.
func TestOutNeverOverwritesInput(t *testing.T) {
	dir := t.TempDir()
	data := linearCSV(40)
	writeFile(t, filepath.Join(dir, "good.csv"), data)
	writeFile(t, filepath.Join(dir, "g.txt"), "g: x1, x2\n")
	writeFile(t, filepath.Join(dir, "o.json.partial"), data)
	if err := os.Link(filepath.Join(dir, "good.csv"), filepath.Join(dir, "hard.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("good.csv", filepath.Join(dir, "sym.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"estimate", "--data", "good.csv", "--out", "good.csv", "--format", "csv"}, "--out good.csv is --data good.csv"},
		{[]string{"estimate", "--data", "good.csv", "--out", "./sub/../good.csv"}, "--out ./sub/../good.csv is --data good.csv"},
		{[]string{"estimate", "--data", "good.csv", "--out", "hard.csv"}, "--out hard.csv is the same file as --data good.csv"},
		{[]string{"estimate", "--data", "sym.csv", "--out", "good.csv"}, "--out good.csv is the same file as --data sym.csv"},
		{[]string{"estimate", "--data", "good.csv", "--groups-file", "g.txt", "--out", "g.txt"}, "--out g.txt is --groups-file g.txt"},
		{[]string{"estimate", "--data", "o.json.partial", "--out", "o.json"}, "--out's checkpoint o.json.partial is --data o.json.partial"},
		{[]string{"shapley", "--data", "good.csv", "--out", "good.csv"}, "--out good.csv is --data good.csv"},
		{[]string{"roar", "--data", "good.csv", "--out", "sym.csv"}, "--out sym.csv is the same file as --data good.csv"},
	} {
		_, stderr, code := vi(t, dir, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("vi %s: exit code %d, stderr %q; want 2 and one line with %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		for _, f := range []string{"good.csv", "hard.csv", "sym.csv", "o.json.partial"} {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != data {
				t.Fatalf("vi %s: %s changed (%v)", strings.Join(tc.args, " "), f, err)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(b) != "g: x1, x2\n" {
			t.Fatalf("vi %s: g.txt changed", strings.Join(tc.args, " "))
		}
	}
}

// TestDataFromStdin: --data - reads standard input.
func TestDataFromStdin(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(viBinary(t), "estimate", "--data", "-", "--estimators", "dropout", "--format", "csv", "--epochs", "5", "--hidden", "8", "--workers", "1")
	cmd.Stdin = strings.NewReader("\ufeff\"x1\",\"x2\",\"x3\",\"y\"\r" + strings.ReplaceAll(strings.TrimPrefix(linearCSV(60), "x1,x2,x3,y\n"), "\n", "\r"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if got := strings.Count(out.String(), ",dropout,"); got != 3 {
		t.Errorf("want 3 results (x1, x2, x3), got %d:\n%s", got, out.String())
	}
	cmd = exec.Command(viBinary(t), "estimate", "--data", "-", "--groups-file", "-")
	if b, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(string(b), "cannot both read standard input") {
		t.Errorf("--data - --groups-file -: %v, %q", err, b)
	}
	cmd = exec.Command(viBinary(t), "estimate", "--data", "-")
	cmd.Stdin = strings.NewReader("a,b\n1,x\n")
	b, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 2 || !strings.Contains(string(b), `vi: standard input: row 2, column "b": not a number: "x"`) {
		t.Errorf("bad stdin: exit code %d, output %q", code, b)
	}
}

// TestInterruptWhileReading: vi blocked reading its input (a FIFO that no
// one opens, a pipe whose writer says nothing) ends promptly on SIGTERM and
// SIGINT, with exit code 1 and "interrupted".
func TestInterruptWhileReading(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct {
		name string
		args []string
		sig  os.Signal
	}{
		{"FIFO, SIGTERM", []string{"estimate", "--data", "f.csv"}, syscall.SIGTERM},
		{"FIFO, SIGINT", []string{"estimate", "--data", "f.csv"}, os.Interrupt},
		{"groups file FIFO", []string{"estimate", "--groups-file", "f.csv"}, syscall.SIGTERM},
		{"model file FIFO", []string{"estimate", "--model", "f.csv"}, os.Interrupt},
		{"merge input FIFO", []string{"merge", "f.csv"}, syscall.SIGTERM},
		{"idle stdin, --data -", []string{"estimate", "--data", "-"}, syscall.SIGTERM},
		{"idle stdin, --data /dev/stdin", []string{"estimate", "--data", "/dev/stdin"}, os.Interrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The signal must come once vi handles it; a signal that comes
			// earlier kills it (the default action), and the attempt is
			// repeated later.
			for delay := 50 * time.Millisecond; ; delay *= 2 {
				if delay > 10*time.Second {
					t.Fatal("vi never got as far as reading its input")
				}
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(viBinary(t), tc.args...)
				cmd.Dir = dir
				cmd.Stdin = pr
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				pr.Close()
				time.Sleep(delay)
				if err := cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
				exited := waitExit(cmd, 20*time.Second)
				pw.Close()
				if !exited {
					t.Fatalf("vi still running 20 s after %v; stderr: %q", tc.sig, stderr.String())
				}
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					continue // too early: vi did not handle signals yet
				}
				if code := cmd.ProcessState.ExitCode(); code != 1 || stderr.String() != "vi: interrupted\n" {
					t.Errorf("exit code %d, stderr %q; want 1 and \"vi: interrupted\"", code, stderr.String())
				}
				return
			}
		})
	}
}
