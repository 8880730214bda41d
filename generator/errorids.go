package generator

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"sort"

	"github.com/dave/jennifer/jen"
)

// errorIdentity is one error identity a workflow body tests: a
// package-level sentinel it compares errors with, or an error type it
// looks for. The generated WorkflowDef lists them (resume.ErrorSentinel,
// resume.ErrorType) so that a step error replayed from the journal still
// matches. The list changes no journal key, so it does not enter the
// version: adding a test of a new sentinel keeps in-flight runs resumable.
type errorIdentity struct {
	// id is "importpath.Name" for a sentinel, types.TypeString(T, nil)
	// for a type.
	id       string
	sentinel *types.Var // the sentinel, or nil
	typ      types.Type // the error type, or nil
}

// errorScope is one function body whose error tests count for a
// workflow: the workflow's own body, and (once calls are followed) the
// bodies of the helpers it calls.
type errorScope struct {
	body ast.Node
	info *types.Info
}

// collectErrorIdentities finds the error identities the bodies test,
// sorted by id, and refuses, at their position, the tests a replayed
// error could not answer as the original did:
//
//   - errors.Is(x, S), x == S, x != S and switch x { case S: } with S a
//     package-level variable of an error type: S is collected. With
//     anything else in S's place (a local, a call) the identity cannot be
//     journaled: refused.
//   - errors.As(x, &v) with v of a concrete type T, errors.AsType[T](x),
//     x.(T) and type switch cases on an x of an error interface type: T
//     is collected when its value round-trips through encoding/json (its
//     exported fields of type error are journaled on their own), and
//     refused otherwise. An interface T is refused too, unless every
//     error satisfies it (error, any).
func collectErrorIdentities(scopes []errorScope, self *types.Package, ds *diagnostics) []errorIdentity {
	c := &errorCollector{self: self, ds: ds, byID: map[string]errorIdentity{}}
	for _, s := range scopes {
		c.info = s.info
		ast.Inspect(s.body, c.visit)
	}
	out := make([]errorIdentity, 0, len(c.byID))
	for _, id := range c.byID {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// errorCollector walks bodies for collectErrorIdentities.
type errorCollector struct {
	self *types.Package
	info *types.Info
	ds   *diagnostics
	byID map[string]errorIdentity
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
			c.addSentinel(v)
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
		c.addSentinel(v)
		return
	}
	c.refuseTarget(e, what)
}

func (c *errorCollector) addSentinel(v *types.Var) {
	id := v.Pkg().Path() + "." + v.Name()
	c.byID[id] = errorIdentity{id: id, sentinel: v}
}

func (c *errorCollector) refuseTarget(e ast.Expr, what string) {
	c.ds.errorf(e.Pos(), "%s, %s is not a package-level error variable: its identity cannot be journaled, so a step error replayed after a resume would not match it; compare with a package-level sentinel (var ErrX = errors.New(...))", what, types.ExprString(e))
}

// sentinel returns the package-level variable of an error type that e
// names, or nil.
func (c *errorCollector) sentinel(e ast.Expr) *types.Var {
	if v := c.packageVar(e); v != nil && types.Implements(v.Type(), errorIface) {
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

// typeTarget collects the error type t that a body tests for, or refuses
// it when a replayed error could not be of it.
func (c *errorCollector) typeTarget(t types.Type, pos token.Pos, what string) {
	if t == nil {
		return
	}
	q := nameQualifier(c.self)
	if _, ok := t.Underlying().(*types.Interface); ok {
		if types.Implements(errorIface, t.Underlying().(*types.Interface)) {
			return // every error is one: a replayed error too
		}
		c.ds.errorf(pos, "%s interface type %s cannot be replayed: a step error replayed after a resume keeps only the sentinels and concrete error types its workflow tests; test a concrete error type or a package-level sentinel instead", what, types.TypeString(t, q))
		return
	}
	if _, ok := t.(*types.TypeParam); ok {
		c.ds.errorf(pos, "%s type parameter %s cannot be replayed: test a concrete error type or a package-level sentinel", what, t)
		return
	}
	if !types.Implements(t, errorIface) {
		return // not an error: nothing a step returns can be one
	}
	if err := c.nameable(t); err != nil {
		c.ds.errorf(pos, "%s %s cannot be replayed: %v", what, types.TypeString(t, q), err)
		return
	}
	if err := errorTypeJournalable(t, q); err != nil {
		c.ds.errorf(pos, "%s %s cannot be replayed: a step error of this type is journaled as JSON and %v; export its state in JSON-encodable fields (an exported field of type error for the error it wraps), implement json.Marshaler and json.Unmarshaler, or test a package-level sentinel instead", what, types.TypeString(t, q), err)
		return
	}
	id := types.TypeString(t, nil)
	c.byID[id] = errorIdentity{id: id, typ: t}
}

// nameable reports why the generated code, at the package level of the
// workflow's package, cannot name t.
func (c *errorCollector) nameable(t types.Type) error {
	named, ok := types.Unalias(derefType(t)).(*types.Named)
	if !ok {
		return nil
	}
	obj := named.Obj()
	switch {
	case obj.Pkg() == nil:
		return nil
	case obj.Parent() != obj.Pkg().Scope():
		return fmt.Errorf("%s is declared inside a function, where the generated code cannot name it; declare it at package level", obj.Name())
	case obj.Pkg() != c.self && !obj.Exported():
		return fmt.Errorf("%s is unexported in package %s, so the generated code cannot name it; test an exported type or a sentinel", obj.Name(), obj.Pkg().Path())
	}
	return nil
}

// errorTypeJournalable returns nil when a value of the error type t
// survives the journal: it marshals itself, or its state is exported
// JSON-encodable fields and fields of type error (which the runtime
// journals as errors of their own). Unexported fields and fields tagged
// json:"-" would be lost, so they are refused.
func errorTypeJournalable(t types.Type, q types.Qualifier) error {
	base := derefType(t)
	if roundTrips(base, "MarshalJSON", "UnmarshalJSON") || roundTrips(base, "MarshalText", "UnmarshalText") {
		return nil
	}
	s, ok := base.Underlying().(*types.Struct)
	if !ok {
		return journalable(base, q)
	}
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		switch {
		case !f.Exported():
			return fmt.Errorf("its field %s is unexported, which JSON cannot carry", f.Name())
		case isError(f.Type()):
			continue
		case reflect.StructTag(s.Tag(i)).Get("json") == "-":
			return fmt.Errorf("its field %s is tagged json:\"-\", so it would come back empty", f.Name())
		}
		if err := journalable(f.Type(), q); err != nil {
			return fmt.Errorf("its field %s cannot be journaled: %w", f.Name(), err)
		}
	}
	return nil
}

var errorIface = types.Universe.Lookup("error").Type().Underlying().(*types.Interface)

// isErrorOperand reports whether e's type is an interface that holds
// errors (error, or an interface embedding it).
func (c *errorCollector) isErrorOperand(e ast.Expr) bool {
	t := c.info.TypeOf(e)
	if t == nil {
		return false
	}
	it, ok := t.Underlying().(*types.Interface)
	return ok && types.Implements(it, errorIface)
}

func (c *errorCollector) isNil(e ast.Expr) bool {
	tv, ok := c.info.Types[e]
	return ok && tv.IsNil()
}

// errorScopes are the bodies whose error tests count for w: its own body
// today. Call-following adds here the body of each helper reached from w
// (with the *types.Info of its package), so that the tests a helper makes
// on errors from its steps survive the journal too.
func (w *Workflow) errorScopes() []errorScope {
	return []errorScope{{body: w.decl.Body, info: w.pkg.TypesInfo}}
}

// errorDefs emits the elements of the WorkflowDef's Errors, one a line,
// in id order:
//
//	resume.ErrorSentinel("example.com/bank.ErrDeclined", ErrDeclined),
//	resume.ErrorType[*CardError]("*example.com/bank.CardError"),
//
// They are not part of the version: see errorIdentity.
func (e *workflowEmitter) errorDefs() []jen.Code {
	var out []jen.Code
	for _, id := range e.w.errorIDs {
		if id.sentinel != nil {
			name := id.sentinel.Name()
			if q := e.imports.qualifier(id.sentinel.Pkg()); q != "" {
				name = q + "." + name
			}
			out = append(out, jen.Line().Add(e.rt("ErrorSentinel")).Call(jen.Lit(id.id), jen.Id(name)))
			continue
		}
		out = append(out, jen.Line().Add(e.rt("ErrorType")).Types(jen.Id(e.typ(id.typ))).Call(jen.Lit(id.id)))
	}
	return append(out, jen.Line())
}
