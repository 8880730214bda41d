package generator

import (
	"context"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Config says what to generate.
type Config struct {
	// Context cancels loading.
	Context context.Context
	// Dir is the directory patterns are resolved in and diagnostics are
	// made relative to; "" is the current directory.
	Dir string
	// Patterns are go/packages patterns; none means ".".
	Patterns []string
	// Env is the environment of the go command; nil means os.Environ().
	Env []string
}

// Result is the outcome of one generator run. Nothing has been written:
// see [Result.Write], [Result.Check] and [Result.Manifest].
type Result struct {
	// Files are the generated files, sorted by path. Empty when
	// Diagnostics is not.
	Files []File
	// Stale are generated files whose source holds no workflow anymore,
	// sorted.
	Stale []string
	// Workflows are all workflows found, in package and source order.
	Workflows []*Workflow
	// Diagnostics are the refusals, sorted by position. Any diagnostic
	// means nothing may be written.
	Diagnostics []Diagnostic
	// Warnings are what is allowed but probably not meant (a workflow
	// without steps), sorted by position. They do not stop anything from
	// being written.
	Warnings []Diagnostic
}

// File is one generated file.
type File struct {
	// Path is the absolute path of the file.
	Path string
	// Content is the gofmt'd source.
	Content []byte
}

// Generate loads the packages, checks every workflow and renders the
// generated files. The error is for failures to run at all (the go command
// is missing, a pattern is malformed); problems in the user's code are
// Diagnostics.
func Generate(cfg Config) (*Result, error) {
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if len(cfg.Patterns) == 0 {
		cfg.Patterns = []string{"."}
	}
	base := cfg.Dir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("resumegen: %w", err)
		}
		base = wd
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, fmt.Errorf("resumegen: %w", err)
	}
	ld, err := load(cfg)
	if err != nil {
		return nil, err
	}
	fset := ld.fset
	ds := &diagnostics{fset: fset, base: base}
	ws := &diagnostics{fset: fset, base: base}
	res := &Result{}
	var models []*packageModel
	var staleOnly []*packages.Package
	for _, pkg := range ld.roots {
		if pkg.Dir != "" {
			if err := scanTestFiles(pkg.Dir, fset, ds); err != nil {
				return nil, err
			}
		}
		if !ld.checked[pkg] {
			// No directive: nothing to check, and a type error here is
			// go build's to report, not ours. Only a package go list
			// could not find files for is an error (a mistyped pattern).
			if len(pkg.GoFiles) == 0 && len(pkg.IgnoredFiles) == 0 {
				reportPackageErrors(pkg, ds)
			}
			if ld.generated[pkg] {
				staleOnly = append(staleOnly, pkg)
			}
			continue
		}
		if !reportPackageErrors(pkg, ds) {
			continue
		}
		tp := &typedPackage{
			PkgPath: pkg.PkgPath, Name: pkg.Name, Fset: pkg.Fset, Syntax: pkg.Syntax,
			Types: pkg.Types, TypesInfo: pkg.TypesInfo,
		}
		if pkg.Module != nil {
			tp.ModuleDir = pkg.Module.Dir
		}
		m := analyze(tp, ds)
		m.loaded = pkg
		for _, w := range m.workflows {
			m.describe(w)
		}
		m.generatedNames(ds)
		models = append(models, m)
		res.Workflows = append(res.Workflows, m.workflows...)
		if len(m.workflows) > 0 && ld.runtimeErr != "" {
			refuseMissingRuntime(pkg, ld.runtimeErr, ds)
		}
		for _, w := range m.workflows {
			if len(w.Steps) == 0 {
				ws.errorf(w.decl.Name.Pos(), "workflow %s has no steps: nothing it does is journaled, so a resumed run does all of it again; mark what must run once with //resume:step, or drop //resume:workflow", w.Name)
			}
		}
	}
	checkIdentities(res.Workflows, ds)
	res.Warnings = ws.sorted()
	if res.Diagnostics = ds.sorted(); len(res.Diagnostics) > 0 {
		return res, nil
	}
	for _, pkg := range staleOnly {
		stale, err := staleFiles(pkg, nil)
		if err != nil {
			return nil, err
		}
		res.Stale = append(res.Stale, stale...)
	}
	for _, m := range models {
		files, stale, err := m.render()
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, files...)
		res.Stale = append(res.Stale, stale...)
	}
	sort.Slice(res.Files, func(i, j int) bool { return res.Files[i].Path < res.Files[j].Path })
	sort.Strings(res.Stale)
	return res, nil
}

// runtimeModule is the module of the runtime the generated code imports.
const runtimeModule = "github.com/resumegen/resumegen"

// refuseMissingRuntime refuses to generate for pkg, whose workflows'
// generated code would import the runtime, when the runtime does not load
// there: the file would break the build. When the module does not require
// the runtime's module (what the go command says when it finds no module
// providing the package), the diagnostic gives the go get to run.
func refuseMissingRuntime(pkg *packages.Package, why string, ds *diagnostics) {
	where := pkg.PkgPath
	p := token.Position{}
	if pkg.Module != nil && pkg.Module.GoMod != "" {
		p = token.Position{Filename: pkg.Module.GoMod, Line: 1, Column: 1}
	}
	if strings.Contains(why, "no required module provides package") || strings.Contains(why, "cannot find module providing package") {
		in := ""
		if dir := ds.rel(moduleDir(pkg)); dir != "." && dir != "" {
			in = " in " + dir
		}
		mod := "the main module"
		if pkg.Module != nil {
			mod = "module " + pkg.Module.Path
		}
		msg := fmt.Sprintf("%s does not require %s, whose runtime the code generated for %s imports: run `go get %s`%s, then resumegen again (nothing was written)", mod, runtimeModule, where, resumePath, in)
		if p.IsValid() {
			ds.add(p, msg)
		} else {
			ds.list = append(ds.list, Diagnostic{Message: msg})
		}
		return
	}
	msg := fmt.Sprintf("the code generated for %s imports %s, which does not load: %s (nothing was written)", where, resumePath, why)
	if p.IsValid() {
		ds.add(p, msg)
	} else {
		ds.list = append(ds.list, Diagnostic{Message: msg})
	}
}

// moduleDir is the directory of pkg's module, or of pkg.
func moduleDir(pkg *packages.Package) string {
	if pkg.Module != nil && pkg.Module.Dir != "" {
		return pkg.Module.Dir
	}
	return pkg.Dir
}

// reportPackageErrors turns load, parse and type errors into diagnostics;
// it reports whether the package is usable.
func reportPackageErrors(pkg *packages.Package, ds *diagnostics) bool {
	usable := pkg.Types != nil
	for _, e := range pkg.Errors {
		msg := e.Msg
		if e.Kind == packages.ListError && strings.Contains(e.Pos+msg, generatedSuffix) {
			// go list compiled the package with our stale output, which
			// the type check here does not see: not the user's problem.
			continue
		}
		usable = false
		if e.Pos == "" || e.Pos == "-" {
			ds.list = append(ds.list, Diagnostic{Message: fmt.Sprintf("%s: %s", pkg.PkgPath, msg)})
			continue
		}
		ds.list = append(ds.list, Diagnostic{Message: ds.relPos(e.Pos) + ": " + msg})
	}
	return usable
}

// relPos makes the file of a "file:line:col" position relative.
func (ds *diagnostics) relPos(pos string) string {
	file, rest, ok := strings.Cut(pos, ":")
	if !ok {
		return pos
	}
	return ds.rel(file) + ":" + rest
}

// render renders one generated file per source file holding workflows and
// finds the package's stale generated files.
func (m *packageModel) render() ([]File, []string, error) {
	sortedWorkflows(m.workflows)
	bySource := map[string][]*Workflow{}
	var sources []string
	for _, w := range m.workflows {
		if bySource[w.source] == nil {
			sources = append(sources, w.source)
		}
		bySource[w.source] = append(bySource[w.source], w)
	}
	var files []File
	want := map[string]bool{}
	for _, src := range sources {
		text, err := os.ReadFile(src)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", src, err)
		}
		build, err := buildConstraint(src, text)
		if err != nil {
			return nil, nil, err
		}
		content, err := emitFile(bySource[src], build)
		if err != nil {
			return nil, nil, err
		}
		path := outputPath(src)
		want[path] = true
		files = append(files, File{Path: path, Content: content})
	}
	stale, err := staleFiles(m.loaded, want)
	if err != nil {
		return nil, nil, err
	}
	return files, stale, nil
}

// outputPath is x_resume.go for x.go.
func outputPath(source string) string {
	return strings.TrimSuffix(source, ".go") + generatedSuffix
}

// sourcePath is x.go for x_resume.go.
func sourcePath(generated string) string {
	return strings.TrimSuffix(generated, generatedSuffix) + ".go"
}

// staleFiles lists the generated files in the package's directories that
// no source file asks for anymore.
//
// A generated file that build constraints exclude from this build, as
// they exclude its source (x_windows_resume.go and x_windows.go on linux),
// is not stale: the source was not loaded, so nothing is known about its
// workflows. It is left as it is, for a run on a platform that builds it.
func staleFiles(pkg *packages.Package, want map[string]bool) ([]string, error) {
	dirs := map[string]bool{}
	for _, f := range pkg.GoFiles {
		dirs[filepath.Dir(f)] = true
	}
	excluded := map[string]bool{}
	for _, f := range pkg.IgnoredFiles {
		dirs[filepath.Dir(f)] = true
		excluded[f] = true
	}
	var stale []string
	for dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("find stale generated files: %w", err)
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			if e.IsDir() || !strings.HasSuffix(e.Name(), generatedSuffix) || want[path] {
				continue
			}
			if excluded[path] && excluded[sourcePath(path)] {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("find stale generated files: %w", err)
			}
			if isGeneratedFile(path, src) {
				stale = append(stale, path)
			}
		}
	}
	return stale, nil
}
