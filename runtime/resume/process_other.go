//go:build !unix

package resume

import "os"

// killSelf ends the process at once (TerminateProcess on Windows): no
// deferred function or buffered write runs.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Kill()
	}
	os.Exit(137) // only if the kill was refused
}
