package emit

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// sharedCopies emits the shared copies of the file's helpers (see
// model.Helper), each followed by the wrappers of its journaled calls,
// and the registration of the file's embedded source, which the
// workflows calling them fingerprint:
//
//	// Shared durable copies of helpers of this file, for the workflows of any package that call them.
//	func init() {
//		resume.RegisterSource("example.com/app/util", resumeSource_notify)
//	}
//
//	// Resume_NotifyAll is NotifyAll of notify.go,
//	// with its step calls journaled for whichever workflow calls it.
//	func Resume_NotifyAll(ctx context.Context, owners []Owner) error { ... }
//
//	// resume_NotifyAll_Notify journals step Notify of the workflow calling NotifyAll (default).
//	func resume_NotifyAll_Notify(ctx context.Context, o Owner) error {
//		return resume.Call0(ctx, resume.Site(ctx, "example.com/app/util.NotifyAll:0"), func(ctx context.Context) error {
//			return resume.Callee(ctx, Notify)(ctx, o)
//		})
//	}
func sharedCopies(f *jen.File, src Source, imports *importSet) error {
	lp := src.Package.Load
	f.Comment(load.SharedCopiesMark)
	here := map[string]bool{}
	for _, h := range src.Shared {
		here[h.Display] = true
	}
	deps := src.Package.Dependents()
	var paths []string
	for dep := range deps {
		paths = append(paths, dep)
	}
	sort.Strings(paths)
	for _, dep := range paths {
		var names []string
		for _, n := range deps[dep] {
			if here[n] {
				names = append(names, n)
			}
		}
		if len(names) > 0 {
			f.Comment(load.SharedCopiesFor + dep + ": " + strings.Join(names, ", ") + ".")
		}
	}
	f.Comment("Their source is registered for the workflows' check of it (resume.Source).")
	f.Func().Id("init").Params().Block(
		jen.Id(imports.named(runtimeapi.Path, "resume")).Dot("RegisterSource").Call(jen.Lit(lp.PkgPath), jen.Id(model.SourceVarName(src.Name))),
	)
	f.Line()
	for _, h := range src.Shared {
		copied, err := sharedHelper(h, imports)
		if err != nil {
			return err
		}
		f.Comment(fmt.Sprintf("// %s is %s of %s,\n// with its step calls journaled for whichever workflow calls it.", h.CopyName, helperWhat(h), filepath.Base(lp.Fset.File(h.Decl.Pos()).Name())))
		f.Id(copied)
		f.Line()
		for _, site := range h.Sites {
			site := site
			e := &workflowEmitter{imports: imports, owner: "the workflow calling " + h.Display,
				ref: func(s *model.Step, ctx string) jen.Code {
					return jen.Id(imports.named(runtimeapi.Path, "resume")).Dot("Site").Call(jen.Id(ctx), jen.Lit(site.ID))
				}}
			if site.Step.Child {
				e.childWrapper(f, site.Step)
			} else {
				e.wrapper(f, site.Step)
			}
		}
	}
	return nil
}

// helperWhat names a helper for its copy's comment: F, or "the method
// T.M".
func helperWhat(h *model.Helper) string {
	if h.Fn.Type().(*types.Signature).Recv() != nil {
		return "the method " + h.Display
	}
	return h.Display
}

// sharedHelper renders a shared copy: a deep copy of the helper's
// declaration renamed to h.CopyName, a method's receiver made the first
// parameter, its journaled calls routed to its sites' wrappers and its
// calls of other shared copies to those.
func sharedHelper(h *model.Helper, imports *importSet) (string, error) {
	lp := h.Pkg.Load
	if err := checkHelperImports(h, imports, "the shared copies of "+lp.Name); err != nil {
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
	sites := map[token.Pos]*model.Step{}
	for _, s := range h.Sites {
		sites[s.Step.Call.Lparen] = s.Step
	}
	routeBody(decl.Body, h.CtxName, imports, func(lparen token.Pos) *model.Step { return sites[lparen] },
		func(lparen token.Pos) *model.HelperCall { return h.Calls[lparen] })
	var comments []*ast.CommentGroup
	for _, cg := range h.File.Comments {
		if cg.Pos() >= h.Decl.Type.Pos() && cg.End() <= h.Decl.End() {
			comments = append(comments, cg)
		}
	}
	var buf bytes.Buffer
	cfg := printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}
	if err := cfg.Fprint(&buf, lp.Fset, &printer.CommentedNode{Node: decl, Comments: comments}); err != nil {
		return "", fmt.Errorf("print shared copy of %s: %w", h.Display, err)
	}
	return buf.String(), nil
}
