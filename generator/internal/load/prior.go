package load

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
)

// Prior is one workflow definition as a generated file records it: the
// resume.WorkflowDef literal resumegen wrote there, read from the file's
// text without types. The generator reads the generated files it is about
// to rewrite (or delete) for them: a workflow's earlier version and
// lineage (resume.WorkflowDef.Lineage) and its earlier step list live
// there and nowhere else in the code.
type Prior struct {
	// File is the generated file's path.
	File string
	// Package, Name, ID, Aliases and Old are the literal's fields of those
	// names ("" and nil when absent).
	Package, Name, ID string
	Aliases           []string
	Old               bool
	// Version is the workflow's version (the literal names a constant of
	// the file); Lineage the versions recorded as its lineage.
	Version string
	Lineage []string
	// Steps are the recorded steps, in order.
	Steps []PriorStep
}

// PriorStep is one step of a [Prior].
type PriorStep struct {
	Name, Callee, Signature string
	Child                   bool
	RenamedFrom             []string
}

// Identity is the workflow's identity in the journal, as the runtime
// computes it (resume.WorkflowDef.QualifiedName).
func (p Prior) Identity() string {
	if p.ID != "" {
		return p.ID
	}
	return p.Package + "." + p.Name
}

// PriorProblem is a generated file whose recorded definitions could not
// all be read: a lineage recorded there may be lost.
type PriorProblem struct {
	File string
	Err  error
}

// readPriors reads the workflow definitions recorded in the generated
// files, sorted by file name; a file that does not parse yields what
// parsed and a problem.
func readPriors(files []string) ([]Prior, []PriorProblem) {
	sort.Strings(files)
	var out []Prior
	var problems []PriorProblem
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			problems = append(problems, PriorProblem{File: name, Err: err})
			continue
		}
		ps, err := ReadPriors(name, src)
		out = append(out, ps...)
		if err != nil {
			problems = append(problems, PriorProblem{File: name, Err: err})
		}
	}
	return out, problems
}

// ReadPriors returns the workflow definitions recorded in the generated
// file filename, whose content is src, in file order: every package-level
// var initialized with &X.WorkflowDef{...} (X being the file's name for
// the runtime). A file that does not parse (a merge conflict) yields the
// definitions the parser recovered, with the parse error.
func ReadPriors(filename string, src []byte) ([]Prior, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filename, src, parser.SkipObjectResolution)
	if f == nil {
		return nil, err
	}
	consts := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					if s, ok := stringLit(vs.Values[i]); ok {
						consts[n.Name] = s
					}
				}
			}
		}
	}
	var out []Prior
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if lit := workflowDefLit(v); lit != nil {
					out = append(out, readPrior(filename, lit, consts))
				}
			}
		}
	}
	return out, err
}

// workflowDefLit is the composite literal of &X.WorkflowDef{...}, or nil.
func workflowDefLit(e ast.Expr) *ast.CompositeLit {
	u, ok := e.(*ast.UnaryExpr)
	if !ok || u.Op != token.AND {
		return nil
	}
	lit, ok := u.X.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "WorkflowDef" {
		return lit
	}
	return nil
}

func readPrior(file string, lit *ast.CompositeLit, consts map[string]string) Prior {
	p := Prior{File: file}
	for key, v := range fields(lit) {
		switch key {
		case "Package":
			p.Package, _ = stringLit(v)
		case "Name":
			p.Name, _ = stringLit(v)
		case "ID":
			p.ID, _ = stringLit(v)
		case "Aliases":
			p.Aliases = stringsLit(v)
		case "Old":
			id, ok := v.(*ast.Ident)
			p.Old = ok && id.Name == "true"
		case "Version":
			if id, ok := v.(*ast.Ident); ok {
				p.Version = consts[id.Name]
			} else {
				p.Version, _ = stringLit(v)
			}
		case "Lineage":
			p.Lineage = stringsLit(v)
		case "Steps":
			if steps, ok := v.(*ast.CompositeLit); ok {
				for _, e := range steps.Elts {
					if s, ok := e.(*ast.CompositeLit); ok {
						p.Steps = append(p.Steps, readPriorStep(s))
					}
				}
			}
		}
	}
	return p
}

func readPriorStep(lit *ast.CompositeLit) PriorStep {
	var s PriorStep
	for key, v := range fields(lit) {
		switch key {
		case "Name":
			s.Name, _ = stringLit(v)
		case "Callee":
			s.Callee, _ = stringLit(v)
		case "Signature":
			s.Signature, _ = stringLit(v)
		case "Child":
			id, ok := v.(*ast.Ident)
			s.Child = ok && id.Name == "true"
		case "RenamedFrom":
			s.RenamedFrom = stringsLit(v)
		}
	}
	return s
}

// fields maps the keys of a keyed composite literal to their values.
func fields(lit *ast.CompositeLit) map[string]ast.Expr {
	out := map[string]ast.Expr{}
	for _, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				out[k.Name] = kv.Value
			}
		}
	}
	return out
}

func stringLit(e ast.Expr) (string, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// stringsLit is the strings of a []string{...} literal.
func stringsLit(e ast.Expr) []string {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range lit.Elts {
		if s, ok := stringLit(el); ok {
			out = append(out, s)
		}
	}
	return out
}
