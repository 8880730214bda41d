package check

import (
	"go/ast"
	"go/token"
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// PackageState refuses, in a workflow body and the helpers it calls,
// outside steps, the read of a package-level variable of the module that
// a function of the module writes (see writtenVars): a run resumed in
// another process reads what that process holds. A write is
// Nondeterministic's to refuse.
var PackageState = &Check{
	Name: "packagestate",
	Doc:  "no reads of package-level variables the module writes, outside steps",
	Run: func(p *Pass) {
		walkBodies(p, func(nd *nondet, n ast.Node) {
			nd.markWritten(n)
			if id, ok := n.(*ast.Ident); ok {
				nd.stateRead(id)
			}
		})
	},
}

// markWritten records in lvalues the identifiers n writes without reading
// them: the roots of what writtenBy finds.
func (nd *nondet) markWritten(n ast.Node) {
	info := nd.in.Info()
	writtenBy(info, n, func(e ast.Expr) {
		if id := rootIdent(info, e); id != nil {
			nd.lvalues[id] = true
		}
	})
}

// writtenBy calls mark with each expression n writes in place: the
// left-hand sides of an assignment (not a definition), ++ and --, a range
// clause's =, and the first argument of delete, clear and copy.
func writtenBy(info *types.Info, n ast.Node, mark func(ast.Expr)) {
	switch n := n.(type) {
	case *ast.AssignStmt:
		if n.Tok != token.DEFINE {
			for _, lhs := range n.Lhs {
				mark(lhs)
			}
		}
	case *ast.IncDecStmt:
		mark(n.X)
	case *ast.RangeStmt:
		if n.Tok == token.ASSIGN {
			for _, lhs := range []ast.Expr{n.Key, n.Value} {
				if lhs != nil {
					mark(lhs)
				}
			}
		}
	case *ast.CallExpr:
		if fun, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && len(n.Args) > 0 {
			if b, ok := info.Uses[fun].(*types.Builtin); ok {
				switch b.Name() {
				case "delete", "clear", "copy":
					mark(n.Args[0])
				}
			}
		}
	}
}

// writtenVars are the package-level variables of the packages read from
// source that a function of theirs writes (as globalWrite and
// builtinWrite see writes, or by taking their address), with a position of
// one such write: their value when a run resumes in another process is
// not what the first process saw. A variable only initialized is not in
// it.
func writtenVars(pkgs []*model.Package) map[*types.Var]token.Pos {
	out := map[*types.Var]token.Pos{}
	if len(pkgs) == 0 {
		return out
	}
	module := pkgs[0].Module
	if module == nil {
		return out
	}
	for _, pkg := range module.Packages() {
		info := pkg.Load.TypesInfo
		mark := func(e ast.Expr) {
			if v := rootVar(info, e); v != nil && v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
				if _, ok := out[v]; !ok {
					out[v] = e.Pos()
				}
			}
		}
		for _, f := range pkg.Load.Files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil || (fd.Recv == nil && fd.Name.Name == "init") {
					continue
				}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					writtenBy(info, n, mark)
					switch n := n.(type) {
					case *ast.UnaryExpr:
						if n.Op == token.AND {
							mark(n.X)
						}
					case *ast.CallExpr:
						if fun, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
							if v := pointerMethodTarget(info, fun); v != nil {
								if _, ok := out[v]; !ok {
									out[v] = fun.Pos()
								}
							}
						}
					}
					return true
				})
			}
		}
	}
	return out
}

// stateRead refuses the read of a package-level variable of the module
// that a function of the module writes (see writtenVars); a write there
// is globalWrite's to refuse.
func (nd *nondet) stateRead(id *ast.Ident) {
	if nd.lvalues[id] {
		return
	}
	v, ok := nd.in.Info().Uses[id].(*types.Var)
	if !ok || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return
	}
	at, ok := nd.written[v]
	if !ok {
		return
	}
	name := v.Name()
	if v.Pkg() != nd.pkg.Load.Types {
		name = v.Pkg().Name() + "." + name
	}
	what := "read of package-level variable " + name
	nd.report(id.Pos(), what, "", "it is written at "+nd.p.PosString(at)+", so a run that resumes in another process (after a crash, a deploy) reads another value; pass the value in the run's input, or read it in a //resume:step function")
}
