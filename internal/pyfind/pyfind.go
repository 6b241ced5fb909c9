// Package pyfind finds the Python interpreter that runs lazyvi's Python
// plugins in their tests: python3 on PATH, then $LAZYVI_TORCH_PYTHON or
// Debian's /usr/bin/python3 (where apt-get installs torch, numpy and grpcio
// when the first python3 is a pyenv one, say).
package pyfind

import (
	"errors"
	"os"
	"os/exec"
	"strings"
)

// EnvVar names the interpreter tried after python3 on PATH, instead of
// /usr/bin/python3.
const EnvVar = "LAZYVI_TORCH_PYTHON"

// Candidates are the interpreters tried, in order.
func Candidates() []string {
	out := []string{}
	if p, err := exec.LookPath("python3"); err == nil {
		out = append(out, p)
	}
	if p := os.Getenv(EnvVar); p != "" {
		return append(out, p)
	}
	return append(out, "/usr/bin/python3")
}

// Find returns the first candidate that imports modules (a Python import
// list: "numpy, grpc"), or an error saying, for each candidate, why it
// does not.
func Find(modules string) (string, error) {
	var why []string
	for _, py := range Candidates() {
		out, err := exec.Command(py, "-c", "import "+modules).CombinedOutput()
		if err == nil {
			return py, nil
		}
		why = append(why, py+": "+lastLine(string(out), err))
	}
	return "", errors.New(strings.Join(why, "; "))
}

func lastLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}
