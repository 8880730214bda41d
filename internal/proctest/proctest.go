// Package proctest runs the example commands the way their crash tests
// need: built once per test binary, and run telling a SIGKILL (the
// runtime's fault injection) from any other exit.
package proctest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Main builds the package in the test's directory into a temporary
// binary, stores its path in *bin, runs the tests and exits with their
// status; a failed build fails them all.
func Main(m *testing.M, name string, bin *string) {
	dir, err := os.MkdirTemp("", name+"-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, name)
	code := 1
	if out, err := exec.Command("go", "build", "-o", *bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// Run runs bin with args. killed reports that SIGKILL ended it; err is any
// other failure: a non-zero exit (an *exec.ExitError) or a failure to run.
func Run(bin string, args ...string) (stdout, stderr string, killed bool, err error) {
	cmd := exec.Command(bin, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return out.String(), errOut.String(), true, nil
		}
	}
	return out.String(), errOut.String(), false, err
}

// Outcome runs bin with args for a test that expects it to succeed, fail
// or be killed: out is its standard output, or its standard error when
// it exited non-zero (failed). Not being able to run it fails tb.
func Outcome(tb testing.TB, bin string, args ...string) (out string, killed, failed bool) {
	tb.Helper()
	stdout, stderr, killed, err := Run(bin, args...)
	var exit *exec.ExitError
	switch {
	case killed:
		return stdout, true, false
	case errors.As(err, &exit):
		return stderr, false, true
	case err != nil:
		tb.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
	}
	return stdout, false, false
}
