// Package profile writes the CPU and peak-heap profiles that environment
// variables ask for, so that any run of a command can be profiled without
// a flag of its own.
package profile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// Profiling is switched on by environment variables:
//
//	VI_CPUPROFILE=file  a CPU profile of the whole run
//	VI_MEMPROFILE=file  a heap profile taken when the heap in use was at
//	                    its largest (sampled every peakEvery), for where the
//	                    peak memory goes; inspect with go tool pprof
//	                    -sample_index=inuse_space.
//
// A built-in backend served from a subprocess (--backend-process: vi
// re-executes itself to serve it) writes its own profiles, to the same
// names with ".backend" appended; one in vi's own process is in vi's.
const (
	CPUEnv = "VI_CPUPROFILE"
	MemEnv = "VI_MEMPROFILE"
)

// peakEvery is how often the heap's size is sampled for VI_MEMPROFILE.
const peakEvery = 500 * time.Millisecond

// Start starts the profiles the environment asks for and returns
// the function that stops them and writes them out; errors go to stderr.
// backend is set in a built-in backend's process.
func Start(stderr io.Writer, backend bool) (stop func()) {
	suffix := ""
	if backend {
		suffix = ".backend"
	}
	var stops []func()
	if path := os.Getenv(CPUEnv); path != "" {
		path += suffix
		f, err := os.Create(path)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "vi: %s: %v\n", CPUEnv, err)
		} else {
			stops = append(stops, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	if path := os.Getenv(MemEnv); path != "" {
		path += suffix
		stops = append(stops, peakHeapProfile(path, stderr))
	}
	return func() {
		for _, s := range stops {
			s()
		}
	}
}

// peakHeapProfile samples the heap in use every peakEvery and writes the
// heap profile to path each time the heap has grown by a twentieth over
// the largest it saw (so that a process that ends without stop, a backend
// killed by its client, leaves its profile too); stop takes a last sample.
func peakHeapProfile(path string, stderr io.Writer) (stop func()) {
	runtime.MemProfileRate = 64 << 10
	var peak uint64
	take := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if peak > 0 && ms.HeapInuse <= peak+peak/20 {
			return
		}
		peak = ms.HeapInuse
		var b bytes.Buffer
		if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
			fmt.Fprintf(stderr, "vi: %s: %v\n", MemEnv, err)
			return
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "vi: %s: %v\n", MemEnv, err)
		}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(peakEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				take()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
		take()
	}
}
