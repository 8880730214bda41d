package emit

import (
	"github.com/resumegen/resumegen/generator/internal/load"
	"go/ast"
	"go/types"
	"sort"
	"strconv"
)

// importSet names the packages the generated file refers to. Packages the
// source file imports keep the name they have there, so the copied body
// compiles unchanged; other packages, including those the generated code
// names on its own (the runtime, context, time, strconv), get their own
// name if it is free in the file, else the name with 2, 3, ... appended.
//
// A name is free when the source file does not import anything under it
// and the package declares nothing by that name at package level (Go
// forbids a name in both the file and the package block, and the copied
// body may refer to the package's own declaration). Names of the universe
// are never taken: the generated code uses error, any, string, nil, ...
type importSet struct {
	self   *types.Package
	byPath map[string]string // import path → name in the generated file
	byName map[string]string // name → import path
	used   map[string]bool   // import paths the generated file needs by name
	dots   map[string]bool   // import paths the copied body needs dot-imported
	deflt  map[string]string // import path → the package's own name
}

// newImportSet seeds the names from the source file's imports.
func newImportSet(pkg *load.Package, file *ast.File) *importSet {
	s := &importSet{
		self:   pkg.Types,
		byPath: map[string]string{},
		byName: map[string]string{},
		used:   map[string]bool{},
		dots:   map[string]bool{},
		deflt:  map[string]string{},
	}
	for _, spec := range file.Imports {
		pn := pkg.TypesInfo.PkgNameOf(spec)
		if pn == nil || pn.Name() == "_" || pn.Name() == "." {
			continue
		}
		s.add(pn.Name(), pn.Imported().Path(), pn.Imported().Name())
	}
	return s
}

func (s *importSet) add(name, path, deflt string) {
	if _, ok := s.byPath[path]; ok {
		return
	}
	s.byPath[path] = name
	s.byName[name] = path
	s.deflt[path] = deflt
}

// taken reports whether name cannot be given to a package the source file
// does not import.
func (s *importSet) taken(name string) bool {
	return s.byName[name] != "" || s.self.Scope().Lookup(name) != nil || types.Universe.Lookup(name) != nil
}

// named returns the name of the package at path (whose own name is
// pkgName) in the generated file and records it as needed.
func (s *importSet) named(path, pkgName string) string {
	name, ok := s.byPath[path]
	if !ok {
		name = pkgName
		for i := 2; s.taken(name); i++ {
			name = pkgName + strconv.Itoa(i)
		}
		s.add(name, path, pkgName)
	}
	s.used[path] = true
	return name
}

// qualifier is a types.Qualifier for the generated code; it records every
// package it names as needed.
func (s *importSet) qualifier(p *types.Package) string {
	if p == s.self {
		return ""
	}
	return s.named(p.Path(), p.Name())
}

// use records that the copied body refers to the package through the
// identifier it has in the source file.
func (s *importSet) use(pn *types.PkgName) { s.qualifier(pn.Imported()) }

// dot records that the copied body refers to the package's identifiers
// unqualified, as the source file dot-imports it.
func (s *importSet) dot(path string) { s.dots[path] = true }

// needed lists the needed imports as (name, path) pairs sorted by path;
// name is "" when it equals the package's own name. A package the body
// dot-imports and the generated code also names is imported twice.
func (s *importSet) needed() [][2]string {
	var out [][2]string
	for path := range s.used {
		name := s.byPath[path]
		if name == s.deflt[path] {
			name = ""
		}
		out = append(out, [2]string{name, path})
	}
	for path := range s.dots {
		out = append(out, [2]string{".", path})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][1] != out[j][1] {
			return out[i][1] < out[j][1]
		}
		return out[i][0] < out[j][0]
	})
	return out
}
