//go:build unix

package resume

import (
	"os"
	"syscall"
)

// killSelf ends the process at once with SIGKILL: no deferred function,
// finalizer or buffered write runs, as in an OOM kill.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}
