package load

import (
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Module is the packages of the main module that the generator read from
// source: each checked root and every package of the main module it
// imports, directly or not, with their syntax and types. The later stages
// follow calls into them by types: a helper of another package of the
// module is walked like one of the workflow's package (its steps
// journaled, its non-determinism refused), and gets a durable copy in its
// own package. Packages of other modules and the standard library are not
// read: they come from export data and are judged by what they are (see
// package check's tables). The runtime's own packages are left out: the
// generator knows them by their API.
//
// Reading them costs a parse and a type check of the main module's
// packages a workflow package imports; a tree without workflows still
// type-checks nothing.
type Module struct {
	// Path and Dir are the main module's path and root directory, "" when
	// unknown.
	Path, Dir string
	pkgs      map[string]*Package
	byTypes   map[*types.Package]*Package
}

func newModule(path, dir string) *Module {
	return &Module{Path: path, Dir: dir, pkgs: map[string]*Package{}, byTypes: map[*types.Package]*Package{}}
}

// NewModule returns a Module of pkgs, for a caller that type-checked them
// itself (go vet's analyzer, tests): each package's Module is set to it.
func NewModule(path, dir string, pkgs ...*Package) *Module {
	m := newModule(path, dir)
	for _, p := range pkgs {
		p.Module = m
		m.add(p)
	}
	return m
}

func (m *Module) add(p *Package) {
	m.pkgs[p.PkgPath] = p
	if p.Types != nil {
		m.byTypes[p.Types] = p
	}
}

// Package returns the package of the module with the import path, or nil
// when it was not read from source.
func (m *Module) Package(path string) *Package {
	if m == nil {
		return nil
	}
	return m.pkgs[path]
}

// Of returns the package of the module whose types are pkg, or nil when
// pkg was not read from source (the standard library, another module, the
// runtime).
func (m *Module) Of(pkg *types.Package) *Package {
	if m == nil || pkg == nil {
		return nil
	}
	return m.byTypes[pkg]
}

// Packages lists the module's packages read from source, by import path.
func (m *Module) Packages() []*Package {
	if m == nil {
		return nil
	}
	out := make([]*Package, 0, len(m.pkgs))
	for _, p := range m.pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PkgPath < out[j].PkgPath })
	return out
}

// Exists reports whether the module holds a package at path: one read
// from source, or a directory of Go files below the module's root.
func (m *Module) Exists(path string) bool {
	if m.Package(path) != nil {
		return true
	}
	if m == nil || m.Dir == "" || (path != m.Path && !strings.HasPrefix(path, m.Path+"/")) {
		return false
	}
	dir := filepath.Join(m.Dir, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(path, m.Path), "/")))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !IsTestFile(e.Name()) {
			return true
		}
	}
	return false
}

// RunHandleName is the name of the type that generated code declares for
// the runs of the workflow named goName (F, or Type.Method): FRun,
// Type_MethodRun. User code may name it before it is generated.
func RunHandleName(goName string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, goName) + "Run"
}

// generatedAPI is the set of identifiers that generated code declares
// for user code to use (the workflows' run handles), of every package
// read from source. The generator reads its own output as empty files, so
// code referring to them would not type-check until they are generated:
// "undefined: X" for X in the set is not an error of the user's.
type generatedAPI map[string]bool

// addWorkflows adds the handles of the workflows declared in files.
func (g generatedAPI) addWorkflows(files []*ast.File, generated map[*ast.File]bool) {
	for _, f := range files {
		if generated[f] {
			continue
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Doc == nil || !hasWorkflowDirective(fd.Doc) {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				if t := recvTypeName(fd.Recv.List[0].Type); t != "" {
					name = t + "." + name
				}
			}
			g[RunHandleName(name)] = true
		}
	}
}

func hasWorkflowDirective(doc *ast.CommentGroup) bool {
	for _, c := range doc.List {
		if c.Text == "//resume:workflow" || strings.HasPrefix(c.Text, "//resume:workflow ") {
			return true
		}
	}
	return false
}

func recvTypeName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// undefinedRE matches go/types' message for an unresolved identifier or
// qualified identifier.
var undefinedRE = regexp.MustCompile(`^undefined: (?:[\pL_][\pL\pN_]*\.)?([\pL_][\pL\pN_]*)$`)

// refersTo reports whether err is go/types saying that an identifier
// generated code declares is undefined.
func (g generatedAPI) refersTo(err error) bool {
	te, ok := err.(types.Error)
	if !ok || len(g) == 0 {
		return false
	}
	m := undefinedRE.FindStringSubmatch(te.Msg)
	return m != nil && g[m[1]]
}
