package generator

import (
	"go/ast"
	"go/types"
	"sort"
	"strconv"
)

// importSet names the packages the generated file refers to. Packages the
// source file imports keep the name they have there, so the copied body
// compiles unchanged; other packages get their own name, made unique.
type importSet struct {
	self   *types.Package
	byPath map[string]string // import path → name in the generated file
	byName map[string]string // name → import path
	used   map[string]bool   // import paths the generated file needs
	deflt  map[string]string // import path → the package's own name
}

// newImportSet seeds the names from the source file's imports.
func newImportSet(pkg *typedPackage, file *ast.File) *importSet {
	s := &importSet{
		self:   pkg.Types,
		byPath: map[string]string{},
		byName: map[string]string{},
		used:   map[string]bool{},
		deflt:  map[string]string{},
	}
	for _, spec := range file.Imports {
		pn := pkg.TypesInfo.PkgNameOf(spec)
		if pn == nil || pn.Name() == "_" || pn.Name() == "." {
			continue
		}
		s.add(pn.Name(), pn.Imported())
	}
	return s
}

func (s *importSet) add(name string, p *types.Package) {
	if _, ok := s.byPath[p.Path()]; ok {
		return
	}
	s.byPath[p.Path()] = name
	s.byName[name] = p.Path()
	s.deflt[p.Path()] = p.Name()
}

// qualifier is a types.Qualifier for the generated code; it records every
// package it names as needed.
func (s *importSet) qualifier(p *types.Package) string {
	if p == s.self {
		return ""
	}
	name, ok := s.byPath[p.Path()]
	if !ok {
		name = p.Name()
		for i := 2; s.byName[name] != ""; i++ {
			name = p.Name() + strconv.Itoa(i)
		}
		s.add(name, p)
	}
	s.used[p.Path()] = true
	return name
}

// use records that the generated code refers to the package through the
// identifier it has in the source file.
func (s *importSet) use(pn *types.PkgName) {
	if pn.Name() == "." {
		s.used[pn.Imported().Path()] = true
		s.byPath[pn.Imported().Path()] = "."
		return
	}
	s.qualifier(pn.Imported())
}

// needed lists the needed imports as (name, path) pairs sorted by path;
// name is "" when it equals the package's own name.
func (s *importSet) needed() [][2]string {
	var out [][2]string
	for path := range s.used {
		name := s.byPath[path]
		if name == s.deflt[path] {
			name = ""
		}
		out = append(out, [2]string{name, path})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][1] < out[j][1] })
	return out
}
