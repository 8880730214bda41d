//go:build unix

package resume

import (
	"errors"
	"os"
	"syscall"
)

// processGone reports whether no process with this pid exists on this host.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// killSelf ends the process at once with SIGKILL: no deferred function,
// finalizer or buffered write runs, as in an OOM kill.
func killSelf() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
}
