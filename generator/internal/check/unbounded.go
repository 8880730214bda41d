package check

import (
	"go/ast"
	"go/token"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// UnboundedLoops warns about a loop of a workflow body that journals
// steps and has neither a bound nor an exit: a for without a condition
// (for { ... }, for i := 0; ; i++ { ... }) holding a step call, or a call
// of a helper that reaches one, and no break out of it, no goto, and no
// return but of a failure. Each iteration adds rows to the one run's
// journal, so the journal grows for as long as the run lives and every
// resume replays all of it; the fix is return resume.ContinueAsNew(ctx,
// ...) every so many iterations, or a bound. A return counts as an exit
// when its last result is nil or a call of ContinueAsNew (or the body has
// no error result): a return of an error only ends the run on failure. It
// is a warning, not a refusal: a loop whose exit is a failure (a poller
// until its source goes away) is a program's choice; it reads the body
// only, not the helpers it calls.
var UnboundedLoops = &Check{
	Name: "unboundedloops",
	Doc:  "a step loop with no bound and no exit is named, with continue-as-new as the fix",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			if w.Decl == nil || w.Decl.Body == nil {
				return
			}
			unboundedLoops(p, w)
		})
	},
}

func unboundedLoops(p *Pass, w *model.Workflow) {
	labels := map[*ast.ForStmt]string{}
	ast.Inspect(w.Decl.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.LabeledStmt:
			if f, ok := x.Stmt.(*ast.ForStmt); ok {
				labels[f] = x.Label.Name
			}
		case *ast.ForStmt:
			if x.Cond == nil && journalsIn(w, x) && !loopExits(x.Body, labels[x], hasErrorResult(w)) {
				p.Warnf(x.For, "workflow %s: this loop journals steps and has no bound and no exit: every iteration adds rows to the one run's journal, which grows for as long as the run lives, and every resume replays all of it; "+
					"end the run every so many iterations with return resume.ContinueAsNew(ctx, ...) (its next run starts with the state passed and an empty journal), or bound the loop", w.Name)
			}
		}
		return true
	})
}

// journalsIn reports whether loop holds a step call of w, or a call of a
// helper that reaches one.
func journalsIn(w *model.Workflow, loop *ast.ForStmt) bool {
	in := func(pos token.Pos) bool { return pos >= loop.Body.Lbrace && pos < loop.Body.Rbrace }
	for _, s := range w.Steps {
		if s.Call != nil && in(s.Call.Pos()) {
			return true
		}
	}
	for pos := range w.HelperCalls {
		if in(pos) {
			return true
		}
	}
	return false
}

// hasErrorResult reports whether the workflow's function returns an
// error (its last result).
func hasErrorResult(w *model.Workflow) bool {
	r := w.Decl.Type.Results
	if r == nil || len(r.List) == 0 {
		return false
	}
	id, ok := r.List[len(r.List)-1].Type.(*ast.Ident)
	return ok && id.Name == "error"
}

// loopExits reports whether body, the body of a loop labelled label
// (or ""), has a way out of the loop other than a failure: a break of
// the loop, a goto, or a return of a nil error or of ContinueAsNew.
func loopExits(body *ast.BlockStmt, label string, errResult bool) bool {
	found := false
	var walk func(root ast.Node, nested bool)
	walk = func(root ast.Node, nested bool) {
		ast.Inspect(root, func(n ast.Node) bool {
			if found {
				return false
			}
			switch x := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.ReturnStmt:
				found = successReturn(x, errResult)
			case *ast.BranchStmt:
				switch {
				case x.Tok == token.GOTO:
					found = true
				case x.Tok == token.BREAK && x.Label == nil && !nested:
					found = true
				case x.Tok == token.BREAK && x.Label != nil && x.Label.Name == label:
					found = true
				}
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt, *ast.SelectStmt:
				if n != root && !nested {
					// An unlabelled break in here leaves this statement,
					// not the loop.
					walk(n, true)
					return false
				}
			}
			return true
		})
	}
	walk(body, false)
	return found
}

// successReturn reports whether ret can end the run other than as a
// failure: a body without an error result, a bare return (named
// results), a last result nil, or a call of ContinueAsNew.
func successReturn(ret *ast.ReturnStmt, errResult bool) bool {
	if !errResult || len(ret.Results) == 0 {
		return true
	}
	switch last := ast.Unparen(ret.Results[len(ret.Results)-1]).(type) {
	case *ast.Ident:
		return last.Name == "nil"
	case *ast.CallExpr:
		switch f := ast.Unparen(last.Fun).(type) {
		case *ast.SelectorExpr:
			return f.Sel.Name == "ContinueAsNew"
		case *ast.Ident:
			return f.Name == "ContinueAsNew"
		}
	}
	return false
}
