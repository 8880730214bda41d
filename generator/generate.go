package generator

import (
	"context"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/check"
	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/emit"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
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

// Diagnostic is one refusal of the generator, positioned in the user's
// source like a compiler error; String renders it as file:line:col:
// message.
type Diagnostic = diag.Diagnostic

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
	ld, err := load.Load(load.Config{Context: cfg.Context, Dir: cfg.Dir, Patterns: cfg.Patterns, Env: cfg.Env})
	if err != nil {
		return nil, err
	}
	ds := diag.New(ld.Fset, base)
	ws := diag.New(ld.Fset, base)
	res := &Result{}
	var roots []*load.Package
	goList := map[*load.Package]*packages.Package{}
	var staleOnly []*packages.Package
	for _, pkg := range ld.Roots {
		if !ld.Checked[pkg] {
			// No directive: nothing to check, and a type error here is
			// go build's to report, not ours. Only a package go list
			// could not find files for is an error (a mistyped pattern).
			// Its test files may still hold a workflow.
			if len(pkg.GoFiles) == 0 && len(pkg.IgnoredFiles) == 0 {
				reportPackageErrors(pkg, ds)
			}
			if err := refuseTestWorkflows(pkg, ld.Fset, ds); err != nil {
				return nil, err
			}
			if ld.Generated[pkg] {
				staleOnly = append(staleOnly, pkg)
			}
			continue
		}
		if !reportPackageErrors(pkg, ds) {
			if err := refuseTestWorkflows(pkg, ld.Fset, ds); err != nil {
				return nil, err
			}
			continue
		}
		lp, err := ld.Package(pkg)
		if err != nil {
			return nil, err
		}
		roots = append(roots, lp)
		goList[lp] = pkg
	}
	mod, models := analyzeModule(ld, roots, goList, ds)
	for _, m := range models {
		if (len(m.Workflows) > 0 || len(m.Shared()) > 0) && ld.RuntimeErr != "" {
			refuseMissingRuntime(goList[m.Load], ld.RuntimeErr, ds)
		}
	}
	found := check.Run(check.All, models, ds, ws, false)
	for _, lp := range roots {
		for _, w := range mod.Package(lp.Types).Workflows {
			if !w.BadRecv {
				res.Workflows = append(res.Workflows, publicWorkflow(w, found.Exceptions[w]))
			}
		}
	}
	res.Warnings = ws.Sorted()
	if res.Diagnostics = ds.Sorted(); len(res.Diagnostics) > 0 {
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
		files, stale, err := render(m, goList[m.Load], found.Exceptions)
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

// analyzeModule runs the stages between loading and checking: the
// directives of every package read from source (the roots and the
// packages of the module they import), their call analysis, and the
// models of the packages whose generated files this run writes: the roots,
// and each other package of the module with shared copies of its helpers
// to write (or that had some). Shared copies are written for the
// workflows modelled, and kept for the packages a copies file records
// that this run does not model (see model.Package.Keep). goList gets the
// go list package of each package read.
func analyzeModule(ld *load.Result, roots []*load.Package, goList map[*load.Package]*packages.Package, ds *diag.List) (*model.Module, []*model.Package) {
	all := append([]*load.Package(nil), roots...)
	isRoot := map[*load.Package]bool{}
	for _, lp := range roots {
		isRoot[lp] = true
	}
	for _, p := range ld.ModulePackages() {
		if lp := ld.Module.Package(p.PkgPath); lp != nil && !isRoot[lp] {
			all = append(all, lp)
			goList[lp] = p
		}
	}
	var srcs []calls.Package
	for _, lp := range all {
		srcs = append(srcs, calls.Package{Load: lp, Directives: directive.Scan(lp, ds)})
	}
	mod := model.NewModule(calls.New(srcs...), srcs...)
	var models []*model.Package
	modelled := map[string]bool{}
	build := func(lp *load.Package) {
		models = append(models, mod.Package(lp.Types).Build())
		modelled[lp.PkgPath] = true
	}
	for _, lp := range roots {
		build(lp)
	}
	records := map[*load.Package]map[string][]string{}
	for _, lp := range all {
		records[lp] = lp.SharedCopiesRecord()
	}
	// Modelling a package may make another write shared copies: until no
	// package is added.
	for added := true; added; {
		added = false
		mod.ForgetKept()
		for _, lp := range all {
			for dep, names := range records[lp] {
				if !modelled[dep] && ld.Module.Exists(dep) {
					mod.Package(lp.Types).Keep(dep, names)
				}
			}
		}
		for _, lp := range all {
			m := mod.Package(lp.Types)
			if !modelled[lp.PkgPath] && (len(m.Shared()) > 0 || lp.HasSharedCopies()) {
				build(lp)
				added = true
			}
		}
	}
	return mod, models
}

// refuseTestWorkflows refuses the workflows of the test files of a
// package that is not modelled (it holds no directive, or does not load):
// a workflow in a test file is never generated.
func refuseTestWorkflows(pkg *packages.Package, fset *token.FileSet, ds *diag.List) error {
	if pkg.Dir == "" {
		return nil
	}
	tests, err := load.ScanTestFiles(pkg.Dir, fset)
	if err != nil {
		return err
	}
	directive.RefuseTestWorkflows(tests, ds)
	return nil
}

// refuseMissingRuntime refuses to generate for pkg, whose workflows'
// generated code would import the runtime, when the runtime does not load
// there: the file would break the build. When the module does not require
// the runtime's module (what the go command says when it finds no module
// providing the package), the diagnostic gives the go get to run.
func refuseMissingRuntime(pkg *packages.Package, why string, ds *diag.List) {
	where := pkg.PkgPath
	p := token.Position{}
	if pkg.Module != nil && pkg.Module.GoMod != "" {
		p = token.Position{Filename: pkg.Module.GoMod, Line: 1, Column: 1}
	}
	var msg string
	if strings.Contains(why, "no required module provides package") || strings.Contains(why, "cannot find module providing package") {
		in := ""
		if dir := ds.Rel(moduleDir(pkg)); dir != "." && dir != "" {
			in = " in " + dir
		}
		mod := "the main module"
		if pkg.Module != nil {
			mod = "module " + pkg.Module.Path
		}
		msg = fmt.Sprintf("%s does not require %s, whose runtime the code generated for %s imports: run `go get %s`%s, then resumegen again (nothing was written)", mod, runtimeapi.Module, where, runtimeapi.Path, in)
	} else {
		msg = fmt.Sprintf("the code generated for %s imports %s, which does not load: %s (nothing was written)", where, runtimeapi.Path, why)
	}
	if p.IsValid() {
		ds.Add(p, msg)
	} else {
		ds.AddMessage(msg)
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
func reportPackageErrors(pkg *packages.Package, ds *diag.List) bool {
	usable := pkg.Types != nil
	for _, e := range pkg.Errors {
		msg := e.Msg
		if e.Kind == packages.ListError && strings.Contains(e.Pos+msg, load.GeneratedSuffix) {
			// go list compiled the package with our stale output, which
			// the type check here does not see: not the user's problem.
			continue
		}
		usable = false
		if e.Pos == "" || e.Pos == "-" {
			ds.AddMessage(fmt.Sprintf("%s: %s", pkg.PkgPath, msg))
			continue
		}
		ds.AddMessage(ds.RelPos(e.Pos) + ": " + msg)
	}
	return usable
}

// render renders one generated file per source file holding workflows
// or helpers with shared copies, and finds the package's stale generated
// files.
func render(m *model.Package, pkg *packages.Package, exceptions map[*model.Workflow][]model.Exception) ([]File, []string, error) {
	bySource := map[string]*emit.Source{}
	var sources []string
	source := func(name string, f *ast.File) *emit.Source {
		src := bySource[name]
		if src == nil {
			src = &emit.Source{Package: m, Name: name, File: f}
			bySource[name] = src
			sources = append(sources, name)
		}
		return src
	}
	for _, w := range m.Workflows {
		src := source(w.Source, w.File)
		src.Workflows = append(src.Workflows, w)
	}
	for _, h := range m.Shared() {
		src := source(m.Load.Fset.File(h.Decl.Pos()).Name(), h.File)
		src.Shared = append(src.Shared, h)
	}
	sort.Strings(sources)
	var files []File
	want := map[string]bool{}
	for _, name := range sources {
		text, err := os.ReadFile(name)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", name, err)
		}
		build, err := emit.BuildConstraint(name, text)
		if err != nil {
			return nil, nil, err
		}
		content, err := emit.File(*bySource[name], exceptions, build)
		if err != nil {
			return nil, nil, err
		}
		path := outputPath(name)
		want[path] = true
		files = append(files, File{Path: path, Content: content})
	}
	stale, err := staleFiles(pkg, want)
	if err != nil {
		return nil, nil, err
	}
	return files, stale, nil
}

// outputPath is x_resume.go for x.go.
func outputPath(source string) string {
	return strings.TrimSuffix(source, ".go") + load.GeneratedSuffix
}

// sourcePath is x.go for x_resume.go.
func sourcePath(generated string) string {
	return strings.TrimSuffix(generated, load.GeneratedSuffix) + ".go"
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
			if e.IsDir() || !strings.HasSuffix(e.Name(), load.GeneratedSuffix) || want[path] {
				continue
			}
			if excluded[path] && excluded[sourcePath(path)] {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("find stale generated files: %w", err)
			}
			if load.IsGeneratedFile(path, src) {
				stale = append(stale, path)
			}
		}
	}
	return stale, nil
}
