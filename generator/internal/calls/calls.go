package calls

import (
	"go/ast"
	"go/types"
	"sort"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Analysis is the call analysis of one package.
type Analysis struct {
	// Steps is the call graph whose step calls are every journaled call
	// (see directive.Set.IsStepCall).
	Steps *Graph
	// Waits is the call graph whose step calls are the runtime's waits.
	Waits *Graph

	pkg      *load.Package
	dirs     *directive.Set
	reachers []Reacher
	foreign  *foreignReach
}

// New analyses the calls of pkg, whose directives are dirs.
func New(pkg *load.Package, dirs *directive.Set) *Analysis {
	a := &Analysis{pkg: pkg, dirs: dirs}
	a.Steps = NewGraph(pkg.Files, pkg.TypesInfo, pkg.Types, dirs.IsStepCall)
	a.Waits = NewGraph(pkg.Files, pkg.TypesInfo, pkg.Types, func(call *ast.CallExpr) bool {
		fn, _ := typeutil.Callee(pkg.TypesInfo, call).(*types.Func)
		return runtimeapi.WaitOf(fn) != runtimeapi.NotWait
	})
	a.reachers = a.findReachers()
	a.foreign = newForeignReach(dirs.Foreign)
	return a
}

// Reacher is a function or method of the package that a call the
// generator cannot follow may run, and why it matters.
type Reacher struct {
	Fn *types.Func
	// Kind says why: it calls a step (Witness), is a step, or is a
	// workflow.
	Kind ReacherKind
	// Witness is, for CallsStep, a journaled call it reaches.
	Witness *ast.CallExpr
}

// ReacherKind is why a Reacher matters.
type ReacherKind int

const (
	// CallsStep is a function that reaches a journaled call.
	CallsStep ReacherKind = iota
	// IsStep is a function declared //resume:step.
	IsStep
	// IsWorkflow is a //resume:workflow, whose call from a workflow is a
	// child run.
	IsWorkflow
)

// Reachers lists the package's functions and methods that reach a step,
// those that are steps themselves and the workflows, in source order.
func (a *Analysis) Reachers() []Reacher { return a.reachers }

func (a *Analysis) findReachers() []Reacher {
	workflows := map[*types.Func]bool{}
	for _, w := range a.dirs.Workflows {
		workflows[w.Fn] = true
	}
	var out []Reacher
	for _, fn := range a.Steps.Reachers() {
		if _, isStep := a.dirs.Steps[fn]; isStep || workflows[fn] {
			continue
		}
		out = append(out, Reacher{Fn: fn, Kind: CallsStep, Witness: a.Steps.StepCall(fn)})
	}
	for fn := range a.dirs.Steps {
		if fn.Pkg() == a.pkg.Types && !IsInterfaceMethod(fn) {
			out = append(out, Reacher{Fn: fn, Kind: IsStep})
		}
	}
	for _, w := range a.dirs.Workflows {
		out = append(out, Reacher{Fn: w.Fn, Kind: IsWorkflow})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Fn.Pos() < out[j].Fn.Pos() })
	return out
}

// ForeignReach says how fn, a function or method of another package of
// the module that is not a step, may reach a step ("calls step Notify"),
// or "" when it cannot; see foreignReach.
func (a *Analysis) ForeignReach(fn *types.Func) string { return a.foreign.reach(fn) }

// IsInterfaceMethod reports whether fn is a method of an interface.
func IsInterfaceMethod(fn *types.Func) bool {
	recv := fn.Type().(*types.Signature).Recv()
	return recv != nil && types.IsInterface(recv.Type())
}
