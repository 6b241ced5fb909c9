package backendplugin

import (
	"context"
	"runtime"
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
	for range 1000 {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(done)
		}() // exits locked: its thread ends
		<-done
	}
	time.Sleep(100 * time.Millisecond) // a parent-death SIGKILL would have landed
	m, err := c.Backend().New(context.Background(), framework.ModelSpec{Inputs: 1})
	if err == nil {
		err = m.Fit(context.Background(), mat.NewDense(2, 1, []float64{1, 2}), []float64{2, 4})
	}
	if err != nil {
		t.Fatalf("the plugin did not survive threads of its parent ending: %v", err)
	}
}
