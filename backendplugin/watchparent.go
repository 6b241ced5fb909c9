package backendplugin

import (
	"os"
	"time"
)

// parentPoll is how often a plugin checks that the process that started it
// is still there.
const parentPoll = time.Second

// watchParent calls gone once getppid no longer returns ppid, the pid of the
// process that started the plugin: on Unix an orphan is adopted by init or
// a subreaper, so its parent pid changes when lazyvi is gone. It checks
// every poll until stop is closed. This backs up Linux's parent-death
// signal (dieWithParent) for plugins built with this package, on every
// system, and when the starting client did not ask for the signal.
func watchParent(ppid int, getppid func() int, poll time.Duration, stop <-chan struct{}, gone func()) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if getppid() != ppid {
				gone()
				return
			}
		}
	}
}

// exitOrphaned ends a plugin process whose parent is gone: nobody is left
// to read its answers or its stderr.
func exitOrphaned() { os.Exit(1) }
