package generator

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

// isTestFile reports whether the file is one of its package's tests.
func isTestFile(filename string) bool { return strings.HasSuffix(filename, testSuffix) }

// refuseTestWorkflows reports every //resume:workflow in a _test.go file:
// the generator loads packages without their tests (see load), so such a
// workflow would get neither code nor a diagnostic. The other directives
// of a test file mark nothing a generated workflow can reach: a step
// declared there can only be called from test code.
func refuseTestWorkflows(f *ast.File, ds *diagnostics) {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !isDirective(c.Text) {
				continue
			}
			fields := strings.Fields(strings.TrimPrefix(c.Text, directivePrefix))
			if len(fields) == 0 || fields[0] != "workflow" {
				continue
			}
			what := "the workflow"
			if fd := funcWithDoc(f, cg); fd != nil {
				what = fd.Name.Name
			}
			ds.errorf(c.Slash, "//resume:workflow in a _test.go file is not generated: move %s to a non-test file of the package", what)
		}
	}
}

// funcWithDoc returns the function declaration whose doc comment is cg.
func funcWithDoc(f *ast.File, cg *ast.CommentGroup) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc == cg {
			return fd
		}
	}
	return nil
}

// scanTestFiles refuses the workflows of the _test.go files in dir, the
// directory of a package the generator loaded. It looks at every test file
// go would consider, whatever its build constraints: a workflow in a test
// file is never generated. Only files holding the text //resume:workflow
// are parsed, without types, so the common case costs a read.
func scanTestFiles(dir string, fset *token.FileSet, ds *diagnostics) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("scan test files: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !isTestFile(name) || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		path := filepath.Join(dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("scan test files: %w", err)
		}
		if !bytes.Contains(src, []byte(directivePrefix+"workflow")) {
			continue
		}
		// A file that does not parse is go test's to report; whatever
		// parsed is still scanned.
		f, _ := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if f != nil {
			refuseTestWorkflows(f, ds)
		}
	}
	return nil
}
