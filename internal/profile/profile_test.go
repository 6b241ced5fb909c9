package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStartWritesProfiles checks that the profiles the environment names
// are written, a built-in backend's to the names with ".backend" appended,
// and that nothing is said on stderr when all goes well.
func TestStartWritesProfiles(t *testing.T) {
	for _, backend := range []bool{false, true} {
		dir := t.TempDir()
		cpu, mem := filepath.Join(dir, "cpu"), filepath.Join(dir, "mem")
		t.Setenv(CPUEnv, cpu)
		t.Setenv(MemEnv, mem)
		var stderr bytes.Buffer
		stop := Start(&stderr, backend)
		buf := make([][]byte, 0, 64)
		for i := 0; i < 64; i++ {
			buf = append(buf, make([]byte, 1<<16))
		}
		stop()
		if stderr.Len() > 0 {
			t.Errorf("backend %v: stderr %q", backend, stderr.String())
		}
		suffix := ""
		if backend {
			suffix = ".backend"
		}
		for _, p := range []string{cpu + suffix, mem + suffix} {
			if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
				t.Errorf("backend %v: %s: %v (want a profile)", backend, p, err)
			}
		}
		_ = buf
	}
}

// TestStartReportsBadPath checks that a profile that cannot be written is
// reported on stderr, naming the variable.
func TestStartReportsBadPath(t *testing.T) {
	t.Setenv(CPUEnv, filepath.Join(t.TempDir(), "no", "such", "dir", "cpu"))
	t.Setenv(MemEnv, "")
	var stderr bytes.Buffer
	Start(&stderr, false)()
	if !bytes.Contains(stderr.Bytes(), []byte(CPUEnv)) {
		t.Errorf("stderr %q, want an error naming %s", stderr.String(), CPUEnv)
	}
}
