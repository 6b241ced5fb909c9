package torch_test

import (
	"bufio"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lazyvi/lazyvi/backendplugin"
)

// The plugin exits when the process that started it dies, whatever the
// signal: here its parent is a shell that becomes `sleep`, killed with
// SIGKILL once the plugin has printed its handshake.
func TestExitsWithParent(t *testing.T) {
	requirePython(t)
	sh := exec.Command("sh", "-c", `"$0" -m lazyvi_torch & echo "pid $!"; exec sleep 600`, python(t))
	sh.Env = append(pluginEnv(t), backendplugin.Handshake.MagicCookieKey+"="+backendplugin.Handshake.MagicCookieValue)
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sh.Process.Kill(); _ = sh.Wait() }()
	pid := 0
	lines := bufio.NewScanner(out)
	deadline := time.AfterFunc(startTimeout, func() { _ = sh.Process.Kill() })
	for lines.Scan() {
		l := lines.Text()
		if p, ok := strings.CutPrefix(l, "pid "); ok {
			pid, _ = strconv.Atoi(p)
		}
		if strings.HasPrefix(l, fmt.Sprintf("1|%d|tcp|127.0.0.1:", backendplugin.ProtocolVersion)) {
			break
		}
	}
	deadline.Stop()
	if pid == 0 {
		t.Fatalf("no plugin pid and handshake (%v)", lines.Err())
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }()
	_ = sh.Process.Kill()
	_ = sh.Wait()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return
		}
	}
	t.Errorf("the plugin (pid %d) still runs 10 s after its parent died", pid)
}
