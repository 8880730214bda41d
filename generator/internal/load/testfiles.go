package load

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// testSuffix ends the name of a Go test file.
const testSuffix = "_test.go"

// IsTestFile reports whether the file is one of its package's tests.
func IsTestFile(filename string) bool { return strings.HasSuffix(filename, testSuffix) }

// ScanTestFiles parses the _test.go files in dir, the directory of a
// package the generator loaded, that hold the text //resume:workflow. It
// looks at every test file go would consider, whatever its build
// constraints: a workflow in a test file is never generated. Only files
// holding the text are parsed, without types, so the common case costs a
// read.
func ScanTestFiles(dir string, fset *token.FileSet) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scan test files: %w", err)
	}
	var out []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !IsTestFile(name) || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("scan test files: %w", err)
		}
		if !bytes.Contains(src, []byte("//resume:workflow")) {
			continue
		}
		// A file that does not parse is go test's to report; whatever
		// parsed is still scanned.
		f, _ := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}
