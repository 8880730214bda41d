package calls

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Analysis is the call analysis of the packages read from source: the
// workflow's and the other packages of the module it imports (see
// load.Module). Its graphs span all of them, so a step reached through a
// helper of another package of the module is reached by types.
type Analysis struct {
	// Steps is the call graph whose step calls are every journaled call
	// (see directive.Set.IsStepCall).
	Steps *Graph
	// Waits is the call graph whose step calls are the runtime's waits.
	Waits *Graph

	sets     map[*types.Package]*directive.Set
	files    map[*token.File]*directive.Set
	fset     *token.FileSet
	reachers []Reacher
	foreign  *foreignReach
	params   *params
	// modulePath is the main module's path, "" when unknown.
	modulePath string
}

// Package is one package of an analysis: its source and its directives.
type Package struct {
	Load       *load.Package
	Directives *directive.Set
}

// New analyses the calls of pkgs, which share one file set; their
// directive sets are linked (see directive.Link).
func New(pkgs ...Package) *Analysis {
	a := &Analysis{sets: map[*types.Package]*directive.Set{}, files: map[*token.File]*directive.Set{}}
	var srcs []Source
	var sets []*directive.Set
	for _, p := range pkgs {
		a.fset = p.Load.Fset
		if p.Load.Module != nil && p.Load.Module.Path != "" {
			a.modulePath = p.Load.Module.Path
		}
		a.sets[p.Load.Types] = p.Directives
		sets = append(sets, p.Directives)
		for _, f := range p.Load.Files {
			a.files[p.Load.Fset.File(f.Pos())] = p.Directives
		}
		srcs = append(srcs, Source{Fset: p.Load.Fset, Files: p.Load.Files, Info: p.Load.TypesInfo})
	}
	directive.Link(sets...)
	a.Steps = NewGraph(srcs, func(call *ast.CallExpr) bool {
		s := a.setAt(call.Pos())
		return s != nil && s.IsStepCall(call)
	})
	a.Waits = NewGraph(srcs, func(call *ast.CallExpr) bool {
		s := a.setAt(call.Pos())
		if s == nil {
			return false
		}
		fn, _ := typeutil.Callee(s.Info(), call).(*types.Func)
		return runtimeapi.WaitOf(fn) != runtimeapi.NotWait
	})
	a.reachers = a.findReachers()
	var foreign *directive.Foreign
	if len(pkgs) > 0 {
		foreign = pkgs[0].Directives.Foreign
	}
	a.foreign = newForeignReach(foreign)
	return a
}

// setAt is the directive set of the package whose file holds pos.
func (a *Analysis) setAt(pos token.Pos) *directive.Set {
	if a.fset == nil {
		return nil
	}
	return a.files[a.fset.File(pos)]
}

// Directives returns the directives of pkg, or nil when it was not read
// from source.
func (a *Analysis) Directives(pkg *types.Package) *directive.Set { return a.sets[pkg] }

// Reacher is a function or method read from source that a call the
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

// Reachers lists the functions and methods read from source that reach a
// step, those that are steps themselves and the workflows, by position.
func (a *Analysis) Reachers() []Reacher { return a.reachers }

func (a *Analysis) findReachers() []Reacher {
	workflows := map[*types.Func]bool{}
	steps := map[*types.Func]bool{}
	var out []Reacher
	for _, s := range a.sets {
		for _, w := range s.Workflows {
			workflows[w.Fn] = true
			out = append(out, Reacher{Fn: w.Fn, Kind: IsWorkflow})
		}
		for fn := range s.Steps {
			steps[fn] = true
			if fn.Pkg() == s.Package() && !IsInterfaceMethod(fn) {
				out = append(out, Reacher{Fn: fn, Kind: IsStep})
			}
		}
	}
	for _, fn := range a.Steps.Reachers() {
		if steps[fn] || workflows[fn] {
			continue
		}
		out = append(out, Reacher{Fn: fn, Kind: CallsStep, Witness: a.Steps.StepCall(fn)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Fn.Pos() < out[j].Fn.Pos() })
	return out
}

// ForeignReach says how fn, a function or method of a package not read
// from source (of another module) that is not a step, may reach a step
// ("calls step Notify"), or "" when it cannot; see foreignReach.
//
// A package of the main module that was not read from source (go vet's
// analyzer could not type-check it) is not judged by name: the generator,
// which reads it, does.
func (a *Analysis) ForeignReach(fn *types.Func) string {
	if a.foreign == nil || a.sets[fn.Pkg()] != nil || fn.Pkg() == nil || load.IsRuntimePath(fn.Pkg().Path()) {
		return ""
	}
	if path := fn.Pkg().Path(); a.modulePath != "" && (path == a.modulePath || strings.HasPrefix(path, a.modulePath+"/")) {
		return ""
	}
	return a.foreign.reach(fn)
}

// IsInterfaceMethod reports whether fn is a method of an interface.
func IsInterfaceMethod(fn *types.Func) bool {
	recv := fn.Type().(*types.Signature).Recv()
	return recv != nil && types.IsInterface(recv.Type())
}
