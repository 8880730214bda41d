package directive

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/diag"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Set is every directive of one package, as later stages read them.
type Set struct {
	// Steps are the options of //resume:step on the package's function,
	// method and interface method declarations.
	Steps map[*types.Func]StepOptions
	// Workflows are the functions marked //resume:workflow, in source
	// order, those with a body only (a workflow without one is refused
	// here).
	Workflows []*Workflow
	// Sites maps the Lparen of each call a trailing //resume:step binds
	// to, in any function body, to its directive.
	Sites map[token.Pos]Directive
	// Allows maps a file's line to the //resume:allow at its end.
	Allows map[Line]Directive
	// InBodies are the call-site directives (//resume:step and
	// //resume:allow) of function bodies, with the function holding each,
	// in source order.
	InBodies []InBody
	// Foreign reads the directives of packages not read from source (of
	// other modules) from their files.
	Foreign *Foreign

	info   *types.Info
	pkg    *types.Package
	module map[*types.Package]*Set
}

// Link makes each of sets answer StepOf and WorkflowOf for the functions
// of the others from their directives, rather than by reading the
// declaring file: they are the packages of the module read from source.
func Link(sets ...*Set) {
	module := map[*types.Package]*Set{}
	for _, s := range sets {
		module[s.pkg] = s
	}
	for _, s := range sets {
		s.module = module
	}
}

// Package is the types of the package whose directives s holds.
func (s *Set) Package() *types.Package { return s.pkg }

// Info is the types.Info of the package whose directives s holds.
func (s *Set) Info() *types.Info { return s.info }

// Workflow is a function marked //resume:workflow.
type Workflow struct {
	Fn        *types.Func
	Decl      *ast.FuncDecl
	File      *ast.File
	Filename  string // absolute path of the declaring file
	Directive Directive
}

// Line is a line of a file.
type Line struct {
	File string
	Line int
}

// InBody is a call-site directive and the function declaration it is in.
type InBody struct {
	Directive Directive
	Func      *ast.FuncDecl
}

// StepOf returns the options of the //resume:step on the declaration of
// fn (the generic function fn instantiates, for an instance), of this
// package or of another package of the module.
func (s *Set) StepOf(fn *types.Func) (StepOptions, bool) {
	fn = fn.Origin()
	if o, ok := s.Steps[fn]; ok {
		return o, true
	}
	if other := s.module[fn.Pkg()]; other != nil && other != s {
		o, ok := other.Steps[fn]
		return o, ok
	}
	if fn.Pkg() != nil && fn.Pkg() != s.pkg {
		if o := s.Foreign.Step(fn); o != nil {
			return *o, true
		}
	}
	return StepOptions{}, false
}

// WorkflowOf returns the //resume:workflow directive of fn, a function of
// this package or of another package of the module, or nil.
func (s *Set) WorkflowOf(fn *types.Func) *Directive {
	fn = fn.Origin()
	if fn.Pkg() == s.pkg {
		for _, w := range s.Workflows {
			if w.Fn == fn {
				return &w.Directive
			}
		}
		return nil
	}
	if fn.Pkg() == nil {
		return nil
	}
	if other := s.module[fn.Pkg()]; other != nil {
		return other.WorkflowOf(fn)
	}
	return s.Foreign.Workflow(fn)
}

// IsStepCall reports whether call is a journaled call wherever it is: a
// call carrying a trailing //resume:step, a call of a function or method
// declared //resume:step, of a //resume:workflow (a child run), in this
// package or another of the module, or of one of the runtime's waits.
func (s *Set) IsStepCall(call *ast.CallExpr) bool {
	if _, ok := s.Sites[call.Lparen]; ok {
		return true
	}
	fn, ok := typeutil.Callee(s.info, call).(*types.Func)
	if !ok {
		return false
	}
	if _, ok := s.StepOf(fn); ok {
		return true
	}
	return s.WorkflowOf(fn) != nil || runtimeapi.WaitOf(fn) != runtimeapi.NotWait
}

// Scan reads the directives of pkg and reports, in ds, the directives that
// do not parse, that are attached to nothing or in the wrong place, the
// near misses of the directive form, the workflows of its test files, and
// the call-site directives whose call a reader could not tell.
func Scan(pkg *load.Package, ds *diag.List) *Set {
	s := &Set{Steps: map[*types.Func]StepOptions{}, Sites: map[token.Pos]Directive{}, Allows: map[Line]Directive{},
		Foreign: NewForeign(pkg.Fset, pkg.ModuleDir), info: pkg.TypesInfo, pkg: pkg.Types}
	RefuseTestWorkflows(pkg.TestFiles, ds)
	claimed := map[*ast.Comment]bool{}
	for _, f := range pkg.Files {
		s.scanDeclarations(pkg, f, claimed, ds)
	}
	s.refuseWorkflowSteps(ds)
	for _, f := range pkg.Files {
		s.scanCallSites(pkg, f, claimed, ds)
	}
	for _, f := range pkg.Files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if claimed[c] {
					continue
				}
				if !IsDirective(c.Text) {
					if msg := NearMiss(c.Text); msg != "" {
						ds.Errorf(c.Slash, "%s", msg)
					}
					continue
				}
				ds.Errorf(c.Slash, "%s: directive is not attached to a function declaration: put it in the doc comment right above the func, or at the end of a step call's line in a workflow body", c.Text)
			}
		}
	}
	return s
}

// scanDeclarations reads the directives in the doc comments of the file's
// function, method and interface method declarations.
func (s *Set) scanDeclarations(pkg *load.Package, f *ast.File, claimed map[*ast.Comment]bool, ds *diag.List) {
	info := pkg.TypesInfo
	filename := pkg.Fset.File(f.Pos()).Name()
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		for _, d := range docDirectives(fd.Doc, claimed, ds) {
			fn, _ := info.Defs[fd.Name].(*types.Func)
			switch {
			case fn == nil:
			case d.Verb == "allow":
				ds.Errorf(d.Pos, "%s: //resume:allow goes at the end of the offending line in a workflow body, not on a declaration", d.Text)
			case d.Verb == "step":
				s.Steps[fn] = d.Step
			case fd.Body == nil:
				ds.Errorf(d.Pos, "%s: %s has no body (it is implemented outside Go): a workflow's body is the sequence of steps to journal", d.Text, fd.Name.Name)
			default:
				s.Workflows = append(s.Workflows, &Workflow{Fn: fn, Decl: fd, File: f, Filename: filename, Directive: d})
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		it, ok := n.(*ast.InterfaceType)
		if !ok {
			return true
		}
		for _, field := range it.Methods.List {
			for _, d := range docDirectives(field.Doc, claimed, ds) {
				if len(field.Names) == 0 || d.Verb != "step" {
					ds.Errorf(d.Pos, "%s: only //resume:step can mark an interface method", d.Text)
					continue
				}
				if fn, ok := info.Defs[field.Names[0]].(*types.Func); ok {
					s.Steps[fn] = d.Step
				}
			}
		}
		return true
	})
}

// refuseWorkflowSteps refuses a function marked both //resume:workflow and
// //resume:step: a call of a workflow is a child run, journaled as a step
// of the caller, so the step directive would say nothing true. The step
// directive is dropped.
func (s *Set) refuseWorkflowSteps(ds *diag.List) {
	for _, w := range s.Workflows {
		if _, ok := s.Steps[w.Fn]; !ok {
			continue
		}
		delete(s.Steps, w.Fn)
		ds.Errorf(w.Decl.Name.Pos(), "workflow %s is also marked //resume:step: a call of a workflow from a workflow is a child run, journaled as a step of the caller with the child's own steps inside; remove //resume:step (name= and key= may go at the call site)", goName(w.Decl))
	}
}

// goName is a declaration's name, Type.Method for a method.
func goName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// docDirectives parses the directives of a doc comment and claims them.
// Malformed ones are reported and left out.
func docDirectives(doc *ast.CommentGroup, claimed map[*ast.Comment]bool, ds *diag.List) []Directive {
	if doc == nil {
		return nil
	}
	var out []Directive
	for _, c := range doc.List {
		if !IsDirective(c.Text) {
			continue
		}
		claimed[c] = true
		d, err := Parse(c, false)
		if err != nil {
			ds.Errorf(c.Slash, "%v", err)
			continue
		}
		out = append(out, d)
	}
	return out
}

// scanCallSites claims the trailing directives inside the file's function
// bodies: a //resume:step is bound to its call (see bind) and a
// //resume:allow to its line. Whether the function is one a workflow's
// step search follows is known later, to the checks.
func (s *Set) scanCallSites(pkg *load.Package, f *ast.File, claimed map[*ast.Comment]bool, ds *diag.List) {
	fset := pkg.Fset
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !IsDirective(c.Text) || claimed[c] {
				continue
			}
			fd := enclosingFunc(f, c.Slash)
			if fd == nil {
				continue
			}
			claimed[c] = true
			d, err := Parse(c, true)
			if err != nil {
				ds.Errorf(c.Slash, "%v", err)
				continue
			}
			pos := fset.Position(c.Slash)
			switch d.Verb {
			case "allow":
				s.Allows[Line{pos.Filename, pos.Line}] = d
			case "step":
				call, err := s.bind(fset, fd.Body, c, pos.Line)
				if err != "" {
					ds.Errorf(c.Slash, "%s: %s", c.Text, err)
					continue
				}
				s.Sites[call.Lparen] = d
			default:
				ds.Errorf(c.Slash, "%s: only //resume:step can mark a call in a workflow body", c.Text)
				continue
			}
			s.InBodies = append(s.InBodies, InBody{Directive: d, Func: fd})
		}
	}
}

// bind returns the call that a trailing //resume:step c on line marks, by
// the rule the package documentation states:
//
//   - the candidates are the calls that end on the line (their closing
//     parenthesis is there), conversions and builtins aside; when none
//     does, the innermost call written across the line;
//   - one candidate is the call;
//   - of several, the call is the one that is already a step (declared
//     //resume:step, or a workflow, here or in another package of the
//     module); with none or more than one of those, the line is refused
//     with the candidates listed, since a reader could not tell.
//
// It returns the reason when there is no call to bind to.
func (s *Set) bind(fset *token.FileSet, body *ast.BlockStmt, c *ast.Comment, line int) (*ast.CallExpr, string) {
	var ending []*ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if ok && fset.Position(call.Rparen).Line == line && call.Rparen < c.Slash && s.candidate(call) {
			ending = append(ending, call)
		}
		return true
	})
	switch len(ending) {
	case 0:
		if call := callSpanningLine(fset, body, line); call != nil {
			return call, ""
		}
		return nil, "no call on this line: a call-site //resume:step goes at the end of a line of the call it marks"
	case 1:
		return ending[0], ""
	}
	var steps []*ast.CallExpr
	for _, call := range ending {
		if s.declaredStep(call) {
			steps = append(steps, call)
		}
	}
	if len(steps) == 1 {
		return steps[0], ""
	}
	var names []string
	for _, call := range ending {
		p := fset.Position(call.Pos())
		names = append(names, fmt.Sprintf("%s (%d:%d)", s.callName(call), p.Line, p.Column))
	}
	which := "none of them is declared //resume:step"
	if len(steps) > 1 {
		which = fmt.Sprintf("%d of them are steps already", len(steps))
	}
	return nil, fmt.Sprintf("this line ends %d calls, %s, and %s, so it cannot be told which one the directive marks: put the call to journal on a line of its own, with the directive at its end", len(ending), strings.Join(names, ", "), which)
}

// callName names the function a call calls, for a message: F, pkg.F,
// Type.Method, pkg.Type.Method; the call's function expression when it
// calls no declared function.
func (s *Set) callName(call *ast.CallExpr) string {
	fn, ok := typeutil.Callee(s.info, call).(*types.Func)
	if !ok {
		return types.ExprString(call.Fun)
	}
	name := fn.Name()
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := types.Unalias(t).(*types.Named); ok {
			name = n.Obj().Name() + "." + name
		}
	}
	if fn.Pkg() != nil && fn.Pkg() != s.pkg {
		name = fn.Pkg().Name() + "." + name
	}
	return name
}

// candidate reports whether call may be what a call-site directive marks:
// not a conversion, a builtin or a function literal called in place,
// which no directive can make a step.
func (s *Set) candidate(call *ast.CallExpr) bool {
	if tv, ok := s.info.Types[call.Fun]; ok && (tv.IsType() || tv.IsBuiltin()) {
		return false
	}
	_, lit := ast.Unparen(call.Fun).(*ast.FuncLit)
	return !lit
}

// declaredStep reports whether call calls a function already a step by its
// declaration: marked //resume:step, or a workflow (a child run).
func (s *Set) declaredStep(call *ast.CallExpr) bool {
	fn, ok := typeutil.Callee(s.info, call).(*types.Func)
	if !ok {
		return false
	}
	if _, ok := s.StepOf(fn); ok {
		return true
	}
	return s.WorkflowOf(fn) != nil
}

// callSpanningLine returns the innermost call of body written over
// several lines, one of which (but its last) is line: a directive at the
// end of any line of such a call marks it. It returns nil when none does.
func callSpanningLine(fset *token.FileSet, body *ast.BlockStmt, line int) *ast.CallExpr {
	var inner *ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if fset.Position(call.Pos()).Line <= line && line < fset.Position(call.Rparen).Line {
			if inner == nil || call.Pos() > inner.Pos() {
				inner = call
			}
		}
		return true
	})
	return inner
}

// enclosingFunc returns the function declaration whose body holds pos.
func enclosingFunc(f *ast.File, pos token.Pos) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && fd.Body.Lbrace < pos && pos < fd.Body.Rbrace {
			return fd
		}
	}
	return nil
}

// RefuseTestWorkflows reports every //resume:workflow in the _test.go
// files: the generator loads packages without their tests, so such a
// workflow would get neither code nor a diagnostic. The other directives
// of a test file mark nothing a generated workflow can reach: a step
// declared there can only be called from test code.
func RefuseTestWorkflows(files []*ast.File, ds *diag.List) {
	for _, f := range files {
		refuseTestWorkflows(f, ds)
	}
}

func refuseTestWorkflows(f *ast.File, ds *diag.List) {
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !IsDirective(c.Text) {
				continue
			}
			fields := strings.Fields(strings.TrimPrefix(c.Text, Prefix))
			if len(fields) == 0 || fields[0] != "workflow" {
				continue
			}
			what := "the workflow"
			if fd := funcWithDoc(f, cg); fd != nil {
				what = fd.Name.Name
			}
			ds.Errorf(c.Slash, "//resume:workflow in a _test.go file is not generated: move %s to a non-test file of the package", what)
		}
	}
}

// funcWithDoc returns the function declaration whose doc comment is cg.
func funcWithDoc(f *ast.File, cg *ast.CommentGroup) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc == cg {
			return fd
		}
	}
	return nil
}
