package generator

import (
	"context"
	"fmt"
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
	pkgs, fset, err := load(cfg)
	if err != nil {
		return nil, err
	}
	ds := &diagnostics{fset: fset, base: base}
	res := &Result{}
	var models []*packageModel
	for _, pkg := range pkgs {
		if pkg.Dir != "" {
			if err := scanTestFiles(pkg.Dir, fset, ds); err != nil {
				return nil, err
			}
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
		m.generatedNames(ds)
		models = append(models, m)
		res.Workflows = append(res.Workflows, m.workflows...)
	}
	if res.Diagnostics = ds.sorted(); len(res.Diagnostics) > 0 {
		return res, nil
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
