// Package calls is the generator's call analysis, the stage between the
// directives and the model: which functions of a type-checked package may
// reach a journaled call (a step, a child workflow or a wait), directly or
// through static calls of other functions and methods the package
// declares with a body, and which functions of other packages of the
// module may, read from their source.
//
// A [Graph] knows nothing of directives, only of a predicate that says
// which call expressions are steps; an [Analysis] builds the graphs the
// model and the checks read from the packages' directives. An edge is a
// call whose callee go/types resolves statically (typeutil.Callee) to a
// function or method of a package read from source (the workflow's, or
// another of the module: load.Module); a call anywhere in a function's body
// counts, inside function literals and go or defer statements too, since
// "may reach" must over-approximate. Calls through function values and
// interface methods are not edges: the generator refuses them where they
// may reach a step (see [Graph.Reachers]).
package calls

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"

	"golang.org/x/tools/go/types/typeutil"
)

// Graph is the static call graph of the functions of the packages read
// from source: the workflow's package and the packages of the module it
// imports (see load.Module). They share one file set, and a call is
// resolved with the types of the file that holds it.
type Graph struct {
	infos map[*token.File]*types.Info
	fset  *token.FileSet
	decls map[*types.Func]*ast.FuncDecl
	// witness is, for each function that may reach a step, a step call
	// expression it reaches: in its own body or in a callee's.
	witness map[*types.Func]*ast.CallExpr
}

// Source is one package a Graph is built from: its files and their types.
type Source struct {
	Fset  *token.FileSet
	Files []*ast.File
	Info  *types.Info
}

// NewGraph builds the graph of the functions and methods declared with a
// body in the files of srcs, which share one file set. isStep reports
// whether a call expression is a step call. Recursion and mutual
// recursion are handled: the reachability is a fixpoint.
func NewGraph(srcs []Source, isStep func(*ast.CallExpr) bool) *Graph {
	g := &Graph{infos: map[*token.File]*types.Info{}, decls: map[*types.Func]*ast.FuncDecl{}, witness: map[*types.Func]*ast.CallExpr{}}
	for _, src := range srcs {
		g.fset = src.Fset
		for _, f := range src.Files {
			g.infos[src.Fset.File(f.Pos())] = src.Info
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					if fn, ok := src.Info.Defs[fd.Name].(*types.Func); ok {
						g.decls[fn] = fd
					}
				}
			}
		}
	}
	callees := map[*types.Func][]*types.Func{}
	for fn, fd := range g.decls {
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if isStep(call) {
				if g.witness[fn] == nil {
					g.witness[fn] = call
				}
			} else if c := g.Callee(call); c != nil {
				callees[fn] = append(callees[fn], c)
			}
			return true
		})
	}
	for changed := true; changed; {
		changed = false
		for _, fn := range g.sortedDecls() {
			if g.witness[fn] != nil {
				continue
			}
			for _, c := range callees[fn] {
				if w := g.witness[c]; w != nil {
					g.witness[fn], changed = w, true
					break
				}
			}
		}
	}
	return g
}

// Info returns the types of the file holding pos, nil when no package of
// the graph holds it.
func (g *Graph) Info(pos token.Pos) *types.Info {
	if g.fset == nil {
		return nil
	}
	return g.infos[g.fset.File(pos)]
}

// Decl returns the declaration of fn (or of the generic function it
// instantiates) when a package of the graph declares it with a body, else
// nil.
func (g *Graph) Decl(fn *types.Func) *ast.FuncDecl {
	if fn == nil {
		return nil
	}
	return g.decls[fn.Origin()]
}

// Callee returns the function or method of a package of the graph,
// declared with a body, that call calls statically, or nil: for a call of
// a function of a package not read from source, a builtin, a conversion,
// a function value or an interface method.
func (g *Graph) Callee(call *ast.CallExpr) *types.Func {
	info := g.Info(call.Pos())
	if info == nil {
		return nil
	}
	fn, ok := typeutil.Callee(info, call).(*types.Func)
	if !ok || g.Decl(fn) == nil {
		return nil
	}
	return fn.Origin()
}

// StepCall returns a step call that fn may reach, in its body or through
// the functions it calls, or nil when it reaches none.
func (g *Graph) StepCall(fn *types.Func) *ast.CallExpr {
	if fn == nil {
		return nil
	}
	return g.witness[fn.Origin()]
}

// Methods lists the methods named name declared with a body in the
// packages of the graph, by position.
func (g *Graph) Methods(name string) []*types.Func {
	var out []*types.Func
	for _, fn := range g.sortedDecls() {
		if fn.Name() == name && fn.Type().(*types.Signature).Recv() != nil {
			out = append(out, fn)
		}
	}
	return out
}

// Reachers lists the functions and methods of the graph that may reach a
// step, by position.
func (g *Graph) Reachers() []*types.Func {
	var out []*types.Func
	for _, fn := range g.sortedDecls() {
		if g.witness[fn] != nil {
			out = append(out, fn)
		}
	}
	return out
}

// sortedDecls lists the declared functions by position, so that the
// fixpoint and Reachers do not depend on map order.
func (g *Graph) sortedDecls() []*types.Func {
	out := make([]*types.Func, 0, len(g.decls))
	for fn := range g.decls {
		out = append(out, fn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos() < out[j].Pos() })
	return out
}
