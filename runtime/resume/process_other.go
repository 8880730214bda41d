//go:build !unix

package resume

import "os"

// processGone cannot tell a dead process from a live one here, so it never
// says gone: a dead owner's lease is waited out instead.
func processGone(int) bool { return false }

// killSelf ends the process at once (TerminateProcess on Windows): no
// deferred function or buffered write runs.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	os.Exit(137) // only if the kill was refused
}
