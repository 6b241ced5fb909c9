package backendplugin

import (
	"os/exec"
	"syscall"
)

// dieWithParent asks the kernel to SIGKILL the plugin process cmd starts
// when the thread that starts it ends (Linux's parent-death signal), so
// that a plugin, Go or not, never outlives a lazyvi killed without a chance
// to close it. Open starts the process from a thread it holds until the
// process is gone. A parent-death signal the caller chose is kept.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
}
