package backendplugin

import (
	"bytes"
	"io"
	"sync"
)

// A LogFilter passes a backend process's stderr (Launch.Open's log, the
// WithStderr writer) on to a writer line by line, calling a function
// ahead of each line (to clear a progress bar, say) and dropping
// go-plugin's own report of the process's exit, which the error of the
// call that met it says. Its methods may be called concurrently.
type LogFilter struct {
	w      io.Writer
	before func()

	mu   sync.Mutex
	part []byte // an incomplete last line
}

// NewLogFilter returns a LogFilter writing to w, calling before (when not
// nil) ahead of each line.
func NewLogFilter(w io.Writer, before func()) *LogFilter {
	return &LogFilter{w: w, before: before}
}

// redundant are substrings of go-plugin's log lines that the caller's own
// error message covers.
var redundant = []string{"[ERROR] plugin: plugin process exited"}

// Write passes on the complete lines of what it has been given.
func (l *LogFilter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := l.part[:i+1]
		if !containsAny(line, redundant) {
			if l.before != nil {
				l.before()
			}
			l.w.Write(line)
		}
		l.part = l.part[i+1:]
	}
}

// Flush writes an incomplete last line.
func (l *LogFilter) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 && !containsAny(l.part, redundant) {
		l.w.Write(append(l.part, '\n'))
	}
	l.part = nil
}

func containsAny(b []byte, subs []string) bool {
	for _, s := range subs {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}
