//go:build !linux

package backendplugin

import "os/exec"

// dieWithParent does nothing where there is no parent-death signal; a
// plugin built with this package still exits when its parent is gone (see
// watchParent).
func dieWithParent(*exec.Cmd) {}
