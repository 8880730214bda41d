package emit

import (
	"path/filepath"

	"bytes"
	"fmt"
	"github.com/resumegen/resumegen/generator/internal/model"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"
)

// route returns the call of the helper's copy that replaces call, a copy
// of a call of the helper whose arguments are already routed: h(a, b)
// becomes resumeW_h(a, b) and x.m(a) becomes resumeW_T_m(x, a), with &x
// or *x when the method's receiver needs it, as Go does implicitly. A
// shared copy of another package's helper is named through imports:
// util.F(a) becomes util.Resume_F(a).
func route(hc *model.HelperCall, call *ast.CallExpr, imports *importSet) ast.Expr {
	args := call.Args
	if hc.Method {
		recv := ast.Unparen(call.Fun).(*ast.SelectorExpr).X
		switch {
		case hc.Addr:
			recv = &ast.UnaryExpr{OpPos: recv.Pos(), Op: token.AND, X: recv}
		case hc.Deref:
			recv = &ast.StarExpr{Star: recv.Pos(), X: recv}
		}
		args = append([]ast.Expr{recv}, args...)
	}
	var fun ast.Expr = &ast.Ident{NamePos: call.Fun.Pos(), Name: hc.Helper.CopyName}
	if q := imports.qualifier(hc.Helper.Pkg.Load.Types); q != "" {
		fun = &ast.SelectorExpr{X: &ast.Ident{NamePos: call.Fun.Pos(), Name: q}, Sel: &ast.Ident{NamePos: call.Fun.Pos(), Name: hc.Helper.CopyName}}
	}
	return &ast.CallExpr{
		Fun:      fun,
		Lparen:   call.Lparen,
		Args:     args,
		Ellipsis: call.Ellipsis,
		Rparen:   call.Rparen,
	}
}

// durableHelper renders the durable copy of a helper: a deep copy of its
// declaration renamed to h.CopyName, a method's receiver made the first
// parameter, with its step calls and its calls of other helpers routed as
// in the durable body. Comments inside the function are kept.
//
//	func resumeOnboard_Client_notifyAll(c *Client, ctx context.Context, owners []Owner) error {
//		for _, o := range owners {
//			if err := resumeOnboard_NotifyOwner(ctx, o); err != nil {
//				return err
//			}
//		}
//		return nil
//	}
func durableHelper(w *model.Workflow, h *model.Helper, imports *importSet) (string, error) {
	if err := useHelperImports(w, h, imports); err != nil {
		return "", err
	}
	decl := copyAST(h.Decl)
	decl.Doc = nil
	decl.Name = &ast.Ident{NamePos: decl.Name.NamePos, Name: h.CopyName}
	if decl.Recv != nil {
		decl.Type.Params.List = append([]*ast.Field{decl.Recv.List[0]}, decl.Type.Params.List...)
		decl.Recv = nil
		nameAllParams(decl.Type.Params)
	}
	routeCalls(w, decl.Body, h.CtxName, imports)

	var comments []*ast.CommentGroup
	for _, cg := range h.File.Comments {
		if cg.Pos() >= h.Decl.Type.Pos() && cg.End() <= h.Decl.End() {
			comments = append(comments, cg)
		}
	}
	var buf bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	if err := cfg.Fprint(&buf, w.Pkg().Load.Fset, &printer.CommentedNode{Node: decl, Comments: comments}); err != nil {
		return "", fmt.Errorf("print durable copy of %s for workflow %s: %w", h.Display, w.Name, err)
	}
	return buf.String(), nil
}

// helperComment is the comment on a helper's durable copy.
func helperComment(w *model.Workflow, h *model.Helper) string {
	what := h.Display
	if h.Fn.Type().(*types.Signature).Recv() != nil {
		what = "the method " + h.Display
	}
	return fmt.Sprintf("// %s is %s of %s,\n// with its step calls journaled for workflow %s.", h.CopyName, what, filepath.Base(w.Pkg().Load.Fset.File(h.Decl.Pos()).Name()), w.Name)
}

// nameAllParams names the unnamed fields of a parameter list "_" when
// another is named: Go forbids mixing them, which moving a named receiver
// before unnamed parameters (or the reverse) would do.
func nameAllParams(params *ast.FieldList) {
	named := false
	for _, f := range params.List {
		named = named || len(f.Names) > 0
	}
	if !named {
		return
	}
	for _, f := range params.List {
		if len(f.Names) == 0 {
			f.Names = []*ast.Ident{{NamePos: f.Type.Pos(), Name: "_"}}
		}
	}
}

// useHelperImports records the packages the helper's body names. The
// helper's file may import a package under another name than the
// generated file gives it (the workflow's file's name, or the package's
// own): the copy would not compile, so that is an error naming both.
func useHelperImports(w *model.Workflow, h *model.Helper, imports *importSet) error {
	return checkHelperImports(h, imports, "the generated file for workflow "+w.Name)
}

// checkHelperImports is useHelperImports for the generated file what
// names.
func checkHelperImports(h *model.Helper, imports *importSet, what string) error {
	uses := h.Pkg.Load.TypesInfo.Uses
	useImports(h.Decl, uses, imports)
	var err error
	ast.Inspect(h.Decl, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || err != nil {
			return err == nil
		}
		if pn, ok := uses[id].(*types.PkgName); ok {
			if got := imports.byPath[pn.Imported().Path()]; got != pn.Name() {
				pos := h.Pkg.Load.Fset.Position(id.Pos())
				err = fmt.Errorf("%s: helper %s names package %q as %s, but %s names it %s: import it under the same name in both files", pos, h.Display, pn.Imported().Path(), pn.Name(), what, got)
			}
		}
		return true
	})
	return err
}
