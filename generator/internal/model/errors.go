package model

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
)

// collectErrorTests finds the tests of errors that the workflow's bodies
// (its own and every function the step search entered) make, and the
// identities they test, sorted by ID:
//
//   - errors.Is(x, S), x == S, x != S and switch x { case S: }: a test
//     of the sentinel S, a package-level variable of an error type; with
//     anything else in S's place (a local, a call) a test whose target
//     names no sentinel (Sentinel is nil), which a replayed error could
//     not answer as the original did.
//   - errors.As(x, &v), errors.AsType[T](x), x.(T) and type switch cases
//     on an x of an error interface type: a test of the type T. An
//     interface every error satisfies (error, any) and a type that is no
//     error test nothing a step returns, and are left out.
//
// A helper such as isRetryable(err) tests the errors of steps it never
// calls, so every function the search entered counts, whether it reaches
// a step or not. The identities change no journal key, so they do not
// enter the version: adding a test of a new sentinel keeps in-flight runs
// resumable.
func (p *Package) collectErrorTests(w *Workflow) {
	c := &errorCollector{}
	for _, f := range w.Funcs {
		c.info = f.Info()
		ast.Inspect(f.Decl.Body, c.visit)
	}
	w.ErrorTests = c.tests
	byID := map[string]ErrorIdentity{}
	for _, t := range c.tests {
		switch {
		case t.Sentinel != nil:
			id := t.Sentinel.Pkg().Path() + "." + t.Sentinel.Name()
			byID[id] = ErrorIdentity{ID: id, Sentinel: t.Sentinel}
		case t.Type != nil && !types.IsInterface(t.Type):
			if _, param := t.Type.(*types.TypeParam); param {
				continue
			}
			id := types.TypeString(t.Type, nil)
			byID[id] = ErrorIdentity{ID: id, Type: t.Type}
		}
	}
	for _, id := range byID {
		w.ErrorIDs = append(w.ErrorIDs, id)
	}
	sort.Slice(w.ErrorIDs, func(i, j int) bool { return w.ErrorIDs[i].ID < w.ErrorIDs[j].ID })
}

// errorCollector walks bodies for collectErrorTests.
type errorCollector struct {
	info  *types.Info
	tests []ErrorTest
}

func (c *errorCollector) visit(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.CallExpr:
		c.call(n)
	case *ast.BinaryExpr:
		if n.Op == token.EQL || n.Op == token.NEQ {
			c.comparison(n.X, n.Y, "in "+types.ExprString(n))
		}
	case *ast.SwitchStmt:
		if n.Tag != nil {
			for _, s := range n.Body.List {
				for _, e := range s.(*ast.CaseClause).List {
					c.comparison(n.Tag, e, "in switch "+types.ExprString(n.Tag)+" { case "+types.ExprString(e)+": }")
				}
			}
		}
	case *ast.TypeAssertExpr:
		if n.Type != nil && c.isErrorOperand(n.X) { // a type switch's x.(type) has no Type
			c.typeTarget(c.info.TypeOf(n.Type), n.Type.Pos(), "type assertion to")
		}
	case *ast.TypeSwitchStmt:
		c.typeSwitch(n)
	}
	return true
}

// call handles errors.Is, errors.As and errors.AsType.
func (c *errorCollector) call(call *ast.CallExpr) {
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return
	}
	fn, ok := c.info.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != "errors" {
		return
	}
	switch fn.Name() {
	case "Is":
		if len(call.Args) == 2 {
			c.sentinelTarget(call.Args[1], "in "+types.ExprString(call))
		}
	case "As":
		if len(call.Args) == 2 {
			if p, ok := c.info.TypeOf(call.Args[1]).Underlying().(*types.Pointer); ok {
				c.typeTarget(p.Elem(), call.Args[1].Pos(), "errors.As into")
			}
		}
	case "AsType":
		if inst, ok := c.info.Instances[id]; ok && inst.TypeArgs.Len() == 1 {
			c.typeTarget(inst.TypeArgs.At(0), call.Fun.Pos(), "errors.AsType of")
		}
	}
}

// comparison handles x == y (and switch x { case y: }): a package-level
// error variable on either side is collected; an error compared with
// anything else but nil is refused.
func (c *errorCollector) comparison(x, y ast.Expr, where string) {
	if c.isNil(x) || c.isNil(y) {
		return
	}
	for _, e := range []ast.Expr{x, y} {
		if v := c.sentinel(e); v != nil {
			c.addSentinel(e, v, where)
			return
		}
	}
	switch {
	case c.isErrorOperand(x):
		c.refuseTarget(y, where)
	case c.isErrorOperand(y):
		c.refuseTarget(x, where)
	}
}

// sentinelTarget collects e when it names a package-level error variable
// and refuses it otherwise.
func (c *errorCollector) sentinelTarget(e ast.Expr, what string) {
	if c.isNil(e) {
		return
	}
	if v := c.sentinel(e); v != nil {
		c.addSentinel(e, v, what)
		return
	}
	c.refuseTarget(e, what)
}

func (c *errorCollector) addSentinel(e ast.Expr, v *types.Var, what string) {
	c.tests = append(c.tests, ErrorTest{Pos: e.Pos(), What: what, Target: e, Sentinel: v})
}

// refuseTarget records a test whose target names no sentinel.
func (c *errorCollector) refuseTarget(e ast.Expr, what string) {
	c.tests = append(c.tests, ErrorTest{Pos: e.Pos(), What: what, Target: e})
}

// sentinel returns the package-level variable of an error type that e
// names, or nil.
func (c *errorCollector) sentinel(e ast.Expr) *types.Var {
	if v := c.packageVar(e); v != nil && types.Implements(v.Type(), ErrorInterface) {
		return v
	}
	return nil
}

// packageVar returns the package-level variable e names, or nil.
func (c *errorCollector) packageVar(e ast.Expr) *types.Var {
	var id *ast.Ident
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	default:
		return nil
	}
	v, ok := c.info.Uses[id].(*types.Var)
	if !ok || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return nil
	}
	return v
}

// typeSwitch handles switch x.(type) on an error: each case type is a
// type target.
func (c *errorCollector) typeSwitch(n *ast.TypeSwitchStmt) {
	var ta *ast.TypeAssertExpr
	switch a := n.Assign.(type) {
	case *ast.ExprStmt:
		ta, _ = a.X.(*ast.TypeAssertExpr)
	case *ast.AssignStmt:
		if len(a.Rhs) == 1 {
			ta, _ = a.Rhs[0].(*ast.TypeAssertExpr)
		}
	}
	if ta == nil || !c.isErrorOperand(ta.X) {
		return
	}
	for _, s := range n.Body.List {
		for _, e := range s.(*ast.CaseClause).List {
			if c.isNil(e) {
				continue
			}
			c.typeTarget(c.info.TypeOf(e), e.Pos(), "type switch case")
		}
	}
}

// typeTarget records a test for the type t: nothing for an interface
// every error satisfies (a replayed error is one too) or a type that is
// no error (nothing a step returns can be one). A type parameter is
// recorded whatever its constraint, which is its underlying type: even
// [T error] stands for concrete error types the journal would have to
// know.
func (c *errorCollector) typeTarget(t types.Type, pos token.Pos, what string) {
	if t == nil {
		return
	}
	it, isInterface := t.Underlying().(*types.Interface)
	_, isParam := t.(*types.TypeParam)
	switch {
	case isParam:
	case isInterface && types.Implements(ErrorInterface, it):
		return
	case !isInterface && !types.Implements(t, ErrorInterface):
		return
	}
	c.tests = append(c.tests, ErrorTest{Pos: pos, What: what, Type: t})
}

// isErrorOperand reports whether e's type is an interface that holds
// errors (error, or an interface embedding it).
func (c *errorCollector) isErrorOperand(e ast.Expr) bool {
	t := c.info.TypeOf(e)
	if t == nil {
		return false
	}
	it, ok := t.Underlying().(*types.Interface)
	return ok && types.Implements(it, ErrorInterface)
}

func (c *errorCollector) isNil(e ast.Expr) bool {
	tv, ok := c.info.Types[e]
	return ok && tv.IsNil()
}
