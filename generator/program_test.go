package generator

import (
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// programSupport is a file of every end-to-end program: its effects log
// and its engine, from the command line "DB EFFECTS [STEP:POINT]".
const programSupport = `package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/resumegen/resumegen/runtime/resume"
	"github.com/resumegen/resumegen/runtime/sqlitejournal"
)

// effects is the effects log's path: os.Args[2].
var effects string

// logEffect appends a line to the effects log.
func logEffect(line string) {
	f, err := os.OpenFile(effects, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// newEngine opens the journal os.Args[1] and returns an engine over it
// with opts, which injects the fault os.Args[3] when it is one (STEP:POINT).
func newEngine(ctx context.Context, opts ...resume.Option) *resume.Engine {
	effects = os.Args[2]
	j, err := sqlitejournal.Open(ctx, os.Args[1])
	if err != nil {
		panic(err)
	}
	opts = append(opts, resume.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if len(os.Args) > 3 && strings.Contains(os.Args[3], ":") {
		f, err := resume.ParseFault(os.Args[3])
		if err != nil {
			panic(err)
		}
		opts = append(opts, resume.WithFault(f))
	}
	return resume.NewEngine(j, opts...)
}
`

// buildProgram writes src as the main package of testModule/name, beside
// programSupport, runs the generator on it, writes the generated file and
// builds the program, returning the binary's path. Diagnostics fail the
// test.
func buildProgram(t *testing.T, name, src string) string {
	t.Helper()
	dir := filepath.Join(testModule, name)
	writeFiles(t, dir, map[string]string{"main.go": src, "support.go": programSupport})
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
