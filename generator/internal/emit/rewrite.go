package emit

import (
	"bytes"
	"fmt"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
)

// durableBody renders the workflow's declaration as the durable body
// function: a deep copy of the user's FuncDecl renamed to resume<W>Body,
// with every step call's callee replaced by its wrapper and every call of
// a helper that reaches steps by its copy (see routeCalls). Nothing else
// changes, so arguments are evaluated where and in the order the original
// evaluates them. Comments inside the function are kept.
func durableBody(w *model.Workflow, imports *importSet) (string, error) {
	// The body keeps the source file's package names: make sure the
	// generated file imports each one it uses.
	useImports(w.Decl, w.Pkg().Load.TypesInfo.Uses, imports)
	for _, s := range w.Steps {
		if s.KeyExpr != nil {
			useImports(s.KeyExpr.Expr, s.KeyExpr.Uses, imports)
		}
	}

	decl := copyAST(w.Decl)
	decl.Doc = nil
	decl.Name = &ast.Ident{NamePos: decl.Name.NamePos, Name: w.BodyName()}
	ctxName := nameContextParam(decl.Type.Params)
	if decl.Recv != nil {
		// A method's body becomes a function of its receiver, first.
		recv := decl.Recv.List[0]
		if len(recv.Names) == 0 || recv.Names[0].Name == "_" {
			recv.Names = []*ast.Ident{{NamePos: recv.Type.Pos(), Name: "_"}}
		}
		decl.Type.Params.List = append([]*ast.Field{recv}, decl.Type.Params.List...)
		decl.Recv = nil
		nameAllParams(decl.Type.Params)
	}

	routeCalls(w, decl.Body, ctxName, imports)

	var comments []*ast.CommentGroup
	for _, cg := range w.File.Comments {
		if cg.Pos() >= w.Decl.Type.Pos() && cg.End() <= w.Decl.End() {
			comments = append(comments, cg)
		}
	}
	var buf bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	if err := cfg.Fprint(&buf, w.Pkg().Load.Fset, &printer.CommentedNode{Node: decl, Comments: comments}); err != nil {
		return "", fmt.Errorf("print durable body of %s: %w", w.Name, err)
	}
	return buf.String(), nil
}

// useImports records each package that the identifiers of n refer to
// through the source file's imports: by its name (pkg.F), or unqualified
// through a dot import (F, after import . "pkg").
func useImports(n ast.Node, uses map[*ast.Ident]types.Object, imports *importSet) {
	selected := map[*ast.Ident]bool{} // the F of x.F: qualified, never dot-imported
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			selected[n.Sel] = true
		case *ast.Ident:
			obj := uses[n]
			if pn, ok := obj.(*types.PkgName); ok {
				imports.use(pn)
			} else if obj != nil && !selected[n] && obj.Pkg() != nil && obj.Pkg() != imports.self && obj.Parent() == obj.Pkg().Scope() {
				imports.dot(obj.Pkg().Path())
			}
		}
		return true
	})
}

// nameContextParam makes sure the first parameter (the run's context) has
// a usable name in the durable body, naming it ctx when it is unnamed or
// blank, and returns that name.
func nameContextParam(params *ast.FieldList) string {
	if params == nil || len(params.List) == 0 {
		return "ctx"
	}
	first := params.List[0]
	if len(first.Names) == 0 {
		// All parameters are unnamed: name them, the context ctx.
		for i, f := range params.List {
			name := "_"
			if i == 0 {
				name = "ctx"
			}
			f.Names = []*ast.Ident{{NamePos: f.Type.Pos(), Name: name}}
		}
		return "ctx"
	}
	if first.Names[0].Name == "_" {
		first.Names[0] = &ast.Ident{NamePos: first.Names[0].NamePos, Name: "ctx"}
	}
	return first.Names[0].Name
}

// routeCalls rewrites, in body (a copy of the workflow's or a helper's
// body, with the original positions), each step call into a call of its
// wrapper and each call of a helper that reaches steps into a call of its
// durable copy. ctxName is the run's context in that body, which the
// wrapper of a step whose callee takes none receives.
func routeCalls(w *model.Workflow, body ast.Node, ctxName string, imports *importSet) {
	byLparen := map[token.Pos]*model.Step{}
	for _, s := range w.Steps {
		if s.Wait == runtimeapi.NotWait && s.Shared == nil { // a wait's call stays as written
			byLparen[s.Call.Lparen] = s
		}
	}
	routeBody(body, ctxName, imports, func(lparen token.Pos) *model.Step { return byLparen[lparen] },
		func(lparen token.Pos) *model.HelperCall { return w.HelperCalls[lparen] })
}

// routeBody is routeCalls with the tables of the body's steps (whose
// Wrapper the call goes to) and helper calls (whose copy it goes to).
func routeBody(body ast.Node, ctxName string, imports *importSet, stepAt func(token.Pos) *model.Step, helperAt func(token.Pos) *model.HelperCall) {
	astutil.Apply(body, nil, func(c *astutil.Cursor) bool {
		call, ok := c.Node().(*ast.CallExpr)
		if !ok {
			return true
		}
		if hc := helperAt(call.Lparen); hc != nil && hc.Helper != nil {
			c.Replace(route(hc, call, imports))
			return true
		}
		s := stepAt(call.Lparen)
		if s == nil {
			return true
		}
		var args []ast.Expr
		if s.Recv != nil {
			recv := ast.Unparen(call.Fun).(*ast.SelectorExpr).X
			if s.AddrRecv {
				recv = &ast.UnaryExpr{Op: token.AND, X: recv}
			}
			args = append(args, recv)
		}
		if !s.TakesCtx {
			args = append(args, ast.NewIdent(ctxName))
		}
		args = append(args, call.Args...)
		if s.KeyExpr != nil {
			// Last, so Go evaluates it after the call's own arguments.
			args = append(args, placeAt(s.KeyExpr.Expr, s.Call.Rparen))
		}
		c.Replace(&ast.CallExpr{
			Fun:      &ast.Ident{NamePos: call.Fun.Pos(), Name: s.Wrapper},
			Lparen:   call.Lparen,
			Args:     args,
			Ellipsis: call.Ellipsis,
			Rparen:   call.Rparen,
		})
		return true
	})
}
