package generator

import (
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// buildProgram writes src as the main package of testModule/name, runs the
// generator on it, writes the generated file and builds the program,
// returning the binary's path. Diagnostics fail the test.
func buildProgram(t *testing.T, name, src string) string {
	t.Helper()
	dir := filepath.Join(testModule, name)
	writeFiles(t, dir, map[string]string{"main.go": src})
	res := generateIn(t, dir)
	if len(res.Diagnostics) > 0 {
		t.Fatalf("diagnostics: %v", res.Diagnostics)
	}
	if _, err := res.Write(); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	goCmd(t, dir, "build", "-o", bin, ".")
	return bin
}

// runProgram runs bin with args and returns its combined output; killed
// reports that SIGKILL ended it (the runtime's fault injection), err any
// other failure to run or exit status.
func runProgram(bin string, args ...string) (out string, killed bool, err error) {
	b, err := exec.Command(bin, args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return string(b), true, nil
		}
	}
	return string(b), false, err
}
