package backendplugin

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/lazyvi/lazyvi/framework"
)

// TestPluginOutlivesThreads: the plugin process gets the parent-death
// signal, which Linux sends when the thread that forked it ends; threads of
// lazyvi ending (the Go runtime ends the thread of a goroutine that exits
// locked to it) must not kill it while the Client is open.
func TestPluginOutlivesThreads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts plugin processes")
	}
	c := openPlugin(t, "linear")
	if c.cmd.SysProcAttr == nil || c.cmd.SysProcAttr.Pdeathsig == 0 {
		t.Fatal("the plugin was started without a parent-death signal")
	}
	tids := make([]int, 1000)
	starts := make([]string, len(tids))
	for i := range tids {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			tids[i] = syscall.Gettid()
			starts[i] = threadStart(tids[i])
			close(done)
		}() // exits locked: its thread ends
		<-done
	}
	// Linux sends the parent-death signal as the thread exits: once every
	// thread is gone from /proc, any signal has been sent. The runtime
	// keeps the main thread (its id is the process's) rather than end it.
	// A thread is the one seen only if its start time matches too, so that
	// a new thread given a freed id is not taken for it.
	deadline := time.Now().Add(10 * time.Second)
	for i, tid := range tids {
		for tid != os.Getpid() && threadStart(tid) == starts[i] {
			if time.Now().After(deadline) {
				t.Fatalf("thread %d still there 10 s after its goroutine ended locked to it", tid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	m, err := c.Backend().New(context.Background(), framework.ModelSpec{Inputs: 1})
	if err == nil {
		err = m.Fit(context.Background(), mat.NewDense(2, 1, []float64{1, 2}), []float64{2, 4})
	}
	if err != nil {
		t.Fatalf("the plugin did not survive threads of its parent ending: %v", err)
	}
}

// threadStart returns the start time of this process's thread tid (field
// 22 of its stat, in clock ticks since boot), "" when it has none.
func threadStart(tid int) string {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return ""
	}
	// The fields after the parenthesised command: state is field 3, start
	// time field 22.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}
