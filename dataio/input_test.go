package dataio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/framework"
)

// TestLoadInterrupted: LoadCSV and LoadGroups return once their context is
// done, whether the open blocks (a FIFO that no one writes) or a read does
// (a FIFO whose writer is idle).
func TestLoadInterrupted(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Release a goroutine left blocked in the open: a writer that comes and goes.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	for _, tc := range []struct {
		name, start string // start: what an idle writer writes first
		load        func(context.Context, string) error
	}{
		{"LoadCSV", "a,b\n1,2\n", func(ctx context.Context, p string) error { _, err := LoadCSV(ctx, p); return err }},
		{"LoadGroups", "g: a\n", func(ctx context.Context, p string) error { _, err := LoadGroups(ctx, p); return err }},
	} {
		name, f := tc.name, tc.load
		for _, idleWriter := range []bool{false, true} {
			var w *os.File
			if idleWriter {
				// O_RDWR does not wait for a reader.
				var err error
				if w, err = os.OpenFile(fifo, os.O_RDWR, 0); err != nil {
					t.Fatal(err)
				}
				w.WriteString(tc.start)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- f(ctx, fifo) }()
			time.AfterFunc(50*time.Millisecond, cancel) // whether before or after the open: the same outcome
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) || errors.Is(err, framework.ErrUsage) || !strings.Contains(err.Error(), "f.csv: reading interrupted") {
					t.Errorf("%s (idle writer %t): want a cancellation naming the file, got %v", name, idleWriter, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s (idle writer %t): still reading 30 s after the cancellation", name, idleWriter)
			}
			if w != nil {
				w.Close()
			}
		}
	}
}

func TestQuoteCutsLongText(t *testing.T) {
	for s, want := range map[string]string{
		"":                              `""`,
		"abc":                           `"abc"`,
		strings.Repeat("a", 64):         `"` + strings.Repeat("a", 64) + `"`,
		strings.Repeat("a", 65):         `"` + strings.Repeat("a", 64) + `"... (65 bytes)`,
		"a" + strings.Repeat("é", 40):   `"a` + strings.Repeat("é", 31) + `"... (81 bytes)`, // cut before a rune
		"x\n" + strings.Repeat("y", 70): `"x\n` + strings.Repeat("y", 61) + `"... (72 bytes)`,
		strings.Repeat("\x7f", 30):      `"` + strings.Repeat(`\x7f`, 16) + `"... (30 bytes)`, // escapes count
	} {
		if got := Quote(s); got != want {
			t.Errorf("Quote(%.20q...) = %s, want %s", s, got, want)
		}
	}
}
