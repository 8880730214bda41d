package check

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Unfollowed refuses what the step search cannot follow that may reach a
// journaled call: a function reaching a step (or being one, or a workflow,
// or a wait), of the package or of another package of the module, used as
// a value; a call through a function value that such
// a function could be; a call of an interface method, not itself a step,
// that such a method implements; and a call of a function of another
// package of the module that may run a step or wait.
var Unfollowed = &Check{
	Name: "unfollowed",
	Doc:  "no journaled call hides behind a function value, an interface method or another package's function",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			callees := map[*ast.Ident]bool{}
			w.Inspect(func(n ast.Node, in *model.Func) {
				if call, ok := n.(*ast.CallExpr); ok {
					callees[model.CalleeIdent(call.Fun)] = true
				}
			})
			w.Inspect(func(n ast.Node, in *model.Func) {
				switch n := n.(type) {
				case *ast.Ident:
					if !callees[n] {
						valueUse(p, pkg, n, in)
					}
				case *ast.CallExpr:
					if _, lit := ast.Unparen(n.Fun).(*ast.FuncLit); lit || w.CallAt(n.Lparen) != nil {
						return
					}
					if callee := pkg.Calls.Steps.Callee(n); callee != nil {
						return // a helper the search followed, or a child workflow
					}
					unfollowedCall(p, pkg, n, in)
				}
			})
		})
	},
}

// reacherWhat says why r matters: "calls step NotifyOwner at a.go:12:9",
// "calls resume.Sleep at a.go:14:6", "is a //resume:step".
func reacherWhat(p *Pass, pkg *model.Package, r calls.Reacher) string {
	switch r.Kind {
	case calls.IsStep:
		return "is a //resume:step"
	case calls.IsWorkflow:
		return "is a //resume:workflow, whose call from a workflow is a child run"
	}
	return fmt.Sprintf("calls %s at %s", runsWhat(pkg, r.Witness), p.PosString(r.Witness.Pos()))
}

// valueUse refuses the use of a function that reaches a step (or is one,
// an interface method declared //resume:step too, or is a wait or a
// workflow) as a value: whoever calls the value later does not journal
// it.
func valueUse(p *Pass, pkg *model.Package, id *ast.Ident, in *model.Func) {
	fn, ok := in.Info().Uses[id].(*types.Func)
	if !ok {
		return
	}
	via := in.Via()
	if calls.IsInterfaceMethod(fn) {
		// Only a step: no implementation is followed through an
		// interface, whose calls the interface call rule judges.
		if _, isStep := in.Pkg.Directives.StepOf(fn); isStep {
			name := model.QualifiedName(fn, in.Pkg.Load.Types)
			p.Errorf(id.Pos(), "%s is a //resume:step, and is used here as a value: whatever calls the value runs it outside the journal; call %s directly in the workflow body or in a helper it calls%s", name, name, via)
		}
		return
	}
	if runtimeapi.WaitOf(fn) != runtimeapi.NotWait {
		p.Errorf(id.Pos(), "resume.%s is used here as a value: a wait is a journaled point of the workflow, and the generator only sees a direct call; call resume.%s directly in the workflow body or in a helper it calls%s", fn.Name(), fn.Name(), via)
		return
	}
	if pkg.Module.Package(fn.Pkg()) == nil {
		if fn.Pkg() != nil {
			foreignValueUse(p, in, id, fn, via)
		}
		return
	}
	name := model.QualifiedName(fn, in.Pkg.Load.Types)
	for _, r := range pkg.Calls.Reachers() {
		if r.Fn == fn.Origin() {
			p.Errorf(id.Pos(), "%s %s, and is used here as a value: whatever calls the value runs it outside the journal; call %s directly in the workflow body or in a helper it calls%s", name, reacherWhat(p, pkg, r), name, via)
			return
		}
	}
}

// foreignValueUse is valueUse for fn, a function of another module: a
// workflow, a step, or a function that may run a step or wait, read from
// its source by name (calls.ForeignReach).
func foreignValueUse(p *Pass, in *model.Func, id *ast.Ident, fn *types.Func, via string) {
	name := fn.Pkg().Name() + "." + model.DisplayName(fn)
	if in.Pkg.Directives.WorkflowOf(fn) != nil {
		p.Errorf(id.Pos(), "%s is a //resume:workflow, whose call from a workflow is a child run, and is used here as a value: whatever calls the value runs it outside the journal; call %s directly in the workflow body or in a helper it calls%s", name, name, via)
		return
	}
	if _, isStep := in.Pkg.Directives.StepOf(fn); isStep {
		p.Errorf(id.Pos(), "%s is a //resume:step, and is used here as a value: whatever calls the value runs it outside the journal; call %s directly in the workflow body or in a helper it calls%s", name, name, via)
		return
	}
	what := in.Pkg.Calls.ForeignReach(fn.Origin())
	if what == "" {
		return
	}
	fix := "mark it //resume:step"
	if wait, ok := strings.CutPrefix(what, calls.ForeignWaitPrefix); ok {
		fix = "call resume." + wait + " in the workflow body" // a step cannot wait
	}
	p.Errorf(id.Pos(), "%s is a function of another module that %s, and is used here as a value: whatever calls the value runs that outside the journal; move the helper into this module and call it directly, or %s%s", name, what, fix, via)
}

// unfollowedCall refuses a call the step search cannot follow that may
// reach a step.
func unfollowedCall(p *Pass, pkg *model.Package, call *ast.CallExpr, in *model.Func) {
	info := in.Info()
	via := in.Via()
	if tv, ok := info.Types[call.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
		return
	}
	switch fn := typeutil.Callee(info, call).(type) {
	case nil, *types.Var:
		t, ok := info.TypeOf(call.Fun).Underlying().(*types.Signature)
		if !ok {
			return
		}
		for _, r := range pkg.Calls.Reachers() {
			if funcValueCould(r.Fn, t) {
				name := model.QualifiedName(r.Fn, in.Pkg.Load.Types)
				fix := "call " + name + " directly, or mark the callee //resume:step"
				if r.Kind == calls.IsWorkflow {
					fix = "call " + name + " directly: only a call the generator sees is a child run"
				}
				p.Errorf(call.Pos(), "call of %s, a function value, may run %s, which has its type and %s: the generator cannot follow a call through a function value, so that step would not be journaled; %s%s",
					types.ExprString(call.Fun), model.QualifiedName(r.Fn, in.Pkg.Load.Types), reacherWhat(p, pkg, r), fix, via)
				return
			}
		}
	case *types.Func:
		if calls.IsInterfaceMethod(fn) {
			interfaceCall(p, pkg, in, call, fn, via)
			return
		}
		if fn.Pkg() != nil && pkg.Module.Package(fn.Pkg()) == nil && in.Pkg.Directives.WorkflowOf(fn) == nil {
			if step := pkg.Calls.ForeignReach(fn.Origin()); strings.HasPrefix(step, calls.ForeignWaitPrefix) {
				p.Errorf(call.Pos(), "%s.%s is a function of another module that %s: the generator follows calls into the packages of the main module only, so that wait would not enter the workflow's version; move the helper into this module, or call resume.%s in the workflow body%s",
					fn.Pkg().Name(), model.DisplayName(fn), step, strings.TrimPrefix(step, calls.ForeignWaitPrefix), via)
			} else if step != "" {
				p.Errorf(call.Pos(), "%s.%s is a function of another module that %s: the generator follows calls into the packages of the main module only, so that step would not be journaled; mark this call //resume:step to journal it as one step, or move the helper into this module%s",
					fn.Pkg().Name(), model.DisplayName(fn), step, via)
			}
		}
	}
}

// interfaceCall refuses a call of interface method fn, not itself a step,
// that a method of the package reaching a step implements.
func interfaceCall(p *Pass, pkg *model.Package, in *model.Func, call *ast.CallExpr, fn *types.Func, via string) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return
	}
	iface, ok := in.Info().TypeOf(sel.X).Underlying().(*types.Interface)
	if !ok {
		return
	}
	for _, r := range pkg.Calls.Reachers() {
		recv := r.Fn.Type().(*types.Signature).Recv()
		if recv == nil || r.Fn.Name() != fn.Name() {
			continue
		}
		t := recv.Type()
		if _, ptr := t.(*types.Pointer); !ptr && !types.Implements(t, iface) {
			t = types.NewPointer(t)
		}
		if types.Implements(t, iface) {
			p.Errorf(call.Pos(), "call of interface method %s may run %s, which implements it and %s: the generator cannot see which implementation runs, so that step would not be journaled; call the concrete method directly, or mark the interface method //resume:step%s",
				types.ExprString(call.Fun), model.QualifiedName(r.Fn, in.Pkg.Load.Types), reacherWhat(p, pkg, r), via)
			return
		}
	}
}

// funcValueCould reports whether fn, as a function value, a method value
// or a method expression, is assignable to a variable of type t.
func funcValueCould(fn *types.Func, t *types.Signature) bool {
	sig := fn.Type().(*types.Signature)
	if sig.TypeParams().Len() > 0 {
		return false
	}
	if types.Identical(model.BareSignature(sig), model.BareSignature(t)) {
		return true
	}
	recv := sig.Recv()
	if recv == nil {
		return false
	}
	params := []*types.Var{types.NewParam(token.NoPos, nil, "", recv.Type())}
	for i := 0; i < sig.Params().Len(); i++ {
		params = append(params, sig.Params().At(i))
	}
	expr := types.NewSignatureType(nil, nil, nil, types.NewTuple(params...), sig.Results(), sig.Variadic())
	return types.Identical(model.BareSignature(expr), model.BareSignature(t))
}
