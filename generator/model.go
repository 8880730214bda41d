package generator

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"github.com/resumegen/resumegen/generator/internal/callgraph"
	"golang.org/x/tools/go/packages"
)

// typedPackage is what the checks and the emitter need of a package: its
// parsed files and types. The generator fills it from go/packages, the
// analyzer (see [Check]) from an analysis pass.
type typedPackage struct {
	PkgPath   string
	Name      string
	Fset      *token.FileSet
	Syntax    []*ast.File
	Types     *types.Package
	TypesInfo *types.Info
	// ModuleDir is the root of the package's module, or "" when unknown:
	// only steps declared below it are read from source.
	ModuleDir string
}

// Workflow is one //resume:workflow function as the generator understood
// it: its steps in source order and its version.
type Workflow struct {
	// Package is the import path of the workflow's package.
	Package string
	// Name is the workflow function's name (Type.Method for a method).
	Name string
	// ID is the workflow's identity in the journal: its name=, or
	// Package + "." + Name. An old version (Old) has the identity of the
	// workflow it is a version of.
	ID string
	// Aliases are the workflow's earlier identities: Package + "." + Name
	// when name= is set. An old version has its current workflow's.
	Aliases []string
	// Old marks a function kept as an old version of another workflow
	// (//resume:workflow old-version-of=X): it executes the runs pinned
	// to its version and starts none.
	Old bool
	// OldVersionOf is, for an old version, the Go name of the workflow it
	// is a version of (Name of that Workflow); "" otherwise.
	OldVersionOf string
	// Version is the hash of the step signature list; see [Version].
	Version string
	// Steps are the workflow's step call sites in source order.
	Steps []*Step
	// Shape is the JSON shape of the run's input (the parameters after the
	// context) and output, one line a field; see jsonShape. It enters the
	// version.
	Shape []string
	// Exceptions are the reviewed exceptions (//resume:allow) in the
	// workflow's body, in source order.
	Exceptions []Exception
	// Graph is the workflow's step graph, a Mermaid flowchart (see
	// package graph); it does not enter the version.
	Graph string

	pkg    *typedPackage
	file   *ast.File
	source string // absolute path of the file declaring the workflow
	decl   *ast.FuncDecl
	sig    *types.Signature
	// recv is the receiver's type of a workflow that is a method, else
	// nil: the engine runs it on the value given with resume.WithReceiver.
	recv types.Type
	// helpers are the durable copies of the package's functions that the
	// body reaches and that reach steps, in the order the step search
	// entered them.
	helpers []*helper
	// helperCalls maps the Lparen of each call of a helper, in the body
	// or in a helper, to the call of its copy.
	helperCalls map[token.Pos]*helperCall
	// reached are all the package's functions the step search walked
	// from the body, whether they reach steps or not, in entry order.
	reached []*ast.FuncDecl
	// errorIDs are the error identities the body tests, sorted by id; see
	// collectErrorIdentities.
	errorIDs []errorIdentity
	// directive is the //resume:workflow that marks the function.
	directive directive
}

// Step is one step call site of a workflow.
type Step struct {
	// Name is the step's journal name.
	Name string
	// Callee is the fully qualified callee: example.com/billing.ScoreAll,
	// example.com/billing.(*Client).Notify.
	Callee string
	// Signature is the callee's type without receiver, qualified by package
	// name and unqualified for the workflow's own package.
	Signature string
	// Policy is default, once or tx.
	Policy string
	// Shape is the JSON shape of what the step journals (its result and
	// what it writes through pointer parameters), one line a field; see
	// jsonShape. It enters the version.
	Shape []string
	// JSON is the type of the value the step journals, written as Shape
	// writes types, or "null" for a step that journals only null; see
	// resume.StepDef.JSON. It follows from the signature, and does not
	// enter the version.
	JSON string
	// Key is the call site's key= expression as hashed into the version,
	// or "" for a step journaled by occurrence.
	Key string
	// RenamedFrom are the step's earlier names (renamed-from=): rows
	// journaled under them count for it. They do not enter the version.
	RenamedFrom []string
	// Pos is the call site, "dir/file.go:42" relative to the module root,
	// or "" when the module root is unknown. It does not enter the
	// version.
	Pos string

	opts     stepOptions
	call     *ast.CallExpr
	wait     waitKind // a call of resume.Sleep, SleepUntil or Await: see waitAt
	fn       *types.Func
	sig      *types.Signature // the callee's signature
	display  string           // callee as shown in the manifest comment
	canonSig string           // signature with fully qualified types
	recv     ast.Expr         // receiver of a method call, else nil
	recvType types.Type       // the wrapper's receiver parameter type
	addrRecv bool             // pass &recv: pointer method on an addressable value
	takesCtx bool             // the callee's first parameter is a context.Context
	index    int              // position in Steps
	wrapper  string           // name of the generated wrapper
	key      *stepKey         // key=EXPR at the call site, or nil
	outArgs  []int            // indices of the pointer parameters, journaled after the call
	values   []int            // indices of the results the journal carries (all but a trailing error)
	hasErr   bool             // the callee's last result is an error
	typeArgs *types.TypeList  // type arguments of a generic function, or nil
	child    bool             // a call of a workflow: a child run (see childAt)
	deferred bool             // reached from a deferred call (see stepSearch.deferred): a compensation
}

// stepKey is a call site's key=EXPR, type-checked in the call's scope.
type stepKey struct {
	expr   ast.Expr                    // parsed EXPR, without positions
	typ    types.Type                  // its type (the wrapper's key parameter)
	conv   keyConversion               // how the wrapper turns it into a string
	parsed ast.Expr                    // EXPR as type-checked
	uses   map[*ast.Ident]types.Object // parsed's objects: the packages to import
}

// keyConversion says how a key value becomes the journal key's string.
type keyConversion int

const (
	keyString   keyConversion = iota // string kinds: string(key)
	keySigned                        // signed integers: strconv.FormatInt
	keyUnsigned                      // unsigned integers: strconv.FormatUint
	keyStringer                      // fmt.Stringer: key.String()
)

// packageModel is what the generator found in one package.
type packageModel struct {
	pkg       *typedPackage
	loaded    *packages.Package // for the generator: where stale files live
	workflows []*Workflow
	stepDecls map[*types.Func]stepOptions // //resume:step on declarations
	// foreign caches the directives of callees declared in other packages
	// of the module, read from their source files.
	foreign     map[*types.Func]*stepOptions
	foreignWF   map[*types.Func]bool // foreignWorkflow's cache
	parsed      map[string]*ast.File
	foreignFset *token.FileSet
	// siteDirectives maps the Lparen of a call carrying a trailing
	// //resume:step, in any function body, to its parsed directive.
	siteDirectives map[token.Pos]directive
	// bodyDirectives are the call-site directives (//resume:step and
	// //resume:allow) of function bodies, with the function holding each.
	bodyDirectives []bodyDirective
	// allows maps a file's line to its //resume:allow.
	allows map[lineKey]*allowance
	// graph is the package's call graph; followed holds the functions a
	// workflow's step search walked: workflows and their helpers.
	graph    *callgraph.Graph
	followed map[*ast.FuncDecl]bool
	// waitGraph is the call graph whose step calls are the waits, built
	// when a deferred call needs it: see deferredWait.
	waitGraph *callgraph.Graph
	// workflowFuncs are the //resume:workflow functions, which a step
	// search does not follow into (a workflow called from a workflow is
	// a child run, not a helper).
	workflowFuncs map[*types.Func]bool
	// oldFuncs maps the workflows that are old versions
	// (old-version-of=), of this package or read by foreignWorkflow, to
	// the Go name of their current workflow.
	oldFuncs map[*types.Func]string
	// foreignReached and srcPackages cache foreignReach.
	foreignReached map[*ast.FuncDecl]string
	srcPackages    map[*types.Package]*srcPackage
	// reacherList caches reachers.
	reacherList  []reacher
	reachersDone bool
}

// lineKey is a line of a file.
type lineKey struct {
	file string
	line int
}

// bodyDirective is a call-site directive and the function it is in.
type bodyDirective struct {
	d  directive
	fn *ast.FuncDecl
}

// buildModel finds the directives of a package, its workflows and their
// step call sites. Problems are recorded in ds; the returned model holds
// every workflow that was recognized, valid or not.
func buildModel(pkg *typedPackage, ds *diagnostics) *packageModel {
	m := &packageModel{pkg: pkg, stepDecls: map[*types.Func]stepOptions{},
		foreign: map[*types.Func]*stepOptions{}, foreignWF: map[*types.Func]bool{}, oldFuncs: map[*types.Func]string{}, parsed: map[string]*ast.File{},
		siteDirectives: map[token.Pos]directive{}, allows: map[lineKey]*allowance{},
		followed: map[*ast.FuncDecl]bool{}, workflowFuncs: map[*types.Func]bool{}}
	claimed := map[*ast.Comment]bool{}
	var files []*ast.File // the non-test files: see refuseTestWorkflows
	for _, f := range pkg.Syntax {
		name := pkg.Fset.File(f.Pos()).Name()
		if isTestFile(name) {
			refuseTestWorkflows(f, ds)
			continue
		}
		files = append(files, f)
		m.scanDeclarations(f, name, claimed, ds)
	}
	for _, f := range files {
		m.scanCallSites(f, claimed, ds)
	}
	for _, f := range files {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if claimed[c] {
					continue
				}
				if !isDirective(c.Text) {
					if msg := nearMiss(c.Text); msg != "" {
						ds.errorf(c.Slash, "%s", msg)
					}
					continue
				}
				ds.errorf(c.Slash, "%s: directive is not attached to a function declaration: put it in the doc comment right above the func, or at the end of a step call's line in a workflow body", c.Text)
			}
		}
	}
	m.refuseWorkflowSteps(ds)
	m.refuseStepWaits(ds)
	if len(m.workflows) > 0 {
		// Only a step search uses the graph: a package without
		// workflows (most of what go vet sees) does not pay for it.
		m.graph = callgraph.New(files, pkg.TypesInfo, pkg.Types, m.isStepCall)
	}
	for _, w := range m.workflows {
		m.findSteps(w, ds)
	}
	m.unfollowedDirectives(ds)
	m.unusedAllows(ds)
	return m
}

// scanDeclarations reads the directives in the doc comments of the file's
// function, method and interface method declarations.
func (m *packageModel) scanDeclarations(f *ast.File, filename string, claimed map[*ast.Comment]bool, ds *diagnostics) {
	info := m.pkg.TypesInfo
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		for _, d := range docDirectives(fd.Doc, claimed, ds) {
			fn, _ := info.Defs[fd.Name].(*types.Func)
			switch {
			case fn == nil:
			case d.verb == "allow":
				ds.errorf(d.pos, "%s: //resume:allow goes at the end of the offending line in a workflow body, not on a declaration", d.text)
			case d.verb == "step":
				m.stepDecls[fn] = d.opts
			case fd.Body == nil:
				ds.errorf(d.pos, "%s: %s has no body (it is implemented outside Go): a workflow's body is the sequence of steps to journal", d.text, fd.Name.Name)
			default:
				w := &Workflow{
					Package: m.pkg.PkgPath, Name: fd.Name.Name,
					pkg: m.pkg, file: f, source: filename, decl: fd,
					sig: fn.Type().(*types.Signature), directive: d,
				}
				if recv := w.sig.Recv(); recv != nil {
					named, _ := derefType(types.Unalias(recv.Type())).(*types.Named)
					if named == nil || named.TypeParams().Len() > 0 {
						ds.errorf(d.pos, "%s: %s is a method of a generic or unnamed type: a workflow may be a method of a named type of its package, whose value the engine is given to run it on (resume.WithReceiver)", d.text, fd.Name.Name)
						continue
					}
					// Its journal name is Type.Method, as a step's.
					w.Name, w.recv = named.Obj().Name()+"."+fd.Name.Name, recv.Type()
				}
				m.workflowFuncs[fn] = true
				if d.wf.oldOf != "" {
					m.oldFuncs[fn] = d.wf.oldOf
				}
				m.workflows = append(m.workflows, w)
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
				if len(field.Names) == 0 || d.verb != "step" {
					ds.errorf(d.pos, "%s: only //resume:step can mark an interface method", d.text)
					continue
				}
				if fn, ok := info.Defs[field.Names[0]].(*types.Func); ok {
					m.stepDecls[fn] = d.opts
				}
			}
		}
		return true
	})
}

// docDirectives parses the directives of a doc comment and claims them.
// Malformed ones are reported and left out.
func docDirectives(doc *ast.CommentGroup, claimed map[*ast.Comment]bool, ds *diagnostics) []directive {
	if doc == nil {
		return nil
	}
	var out []directive
	for _, c := range doc.List {
		if !isDirective(c.Text) {
			continue
		}
		claimed[c] = true
		d, err := parseDirective(c, false)
		if err != nil {
			ds.errorf(c.Slash, "%v", err)
			continue
		}
		out = append(out, d)
	}
	return out
}

// scanCallSites claims the trailing directives inside the file's function
// bodies: a //resume:step is attached to the call ending last on its line
// and a //resume:allow to its line. Whether the function is one a
// workflow's step search follows is known later: see
// unfollowedDirectives.
func (m *packageModel) scanCallSites(f *ast.File, claimed map[*ast.Comment]bool, ds *diagnostics) {
	fset := m.pkg.Fset
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if !isDirective(c.Text) || claimed[c] {
				continue
			}
			fd := enclosingFunc(f, c.Slash)
			if fd == nil {
				continue
			}
			claimed[c] = true
			d, err := parseDirective(c, true)
			if err != nil {
				ds.errorf(c.Slash, "%v", err)
				continue
			}
			pos := fset.Position(c.Slash)
			switch d.verb {
			case "allow":
				m.allows[lineKey{pos.Filename, pos.Line}] = &allowance{d: d, reason: d.reason}
			case "step":
				call := lastCallOnLine(fset, fd.Body, pos.Line)
				if call == nil || call.Rparen > c.Slash {
					call = callSpanningLine(fset, fd.Body, pos.Line)
				}
				if call == nil {
					ds.errorf(c.Slash, "%s: no call on this line: a call-site //resume:step goes at the end of a line of the call it marks", c.Text)
					continue
				}
				m.siteDirectives[call.Lparen] = d
			default:
				ds.errorf(c.Slash, "%s: only //resume:step can mark a call in a workflow body", c.Text)
				continue
			}
			m.bodyDirectives = append(m.bodyDirectives, bodyDirective{d: d, fn: fd})
		}
	}
}

// lastCallOnLine returns the call of body whose closing paren is the last
// one on line, or nil.
func lastCallOnLine(fset *token.FileSet, body *ast.BlockStmt, line int) *ast.CallExpr {
	var last *ast.CallExpr
	ast.Inspect(body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && fset.Position(call.Rparen).Line == line {
			if last == nil || call.Rparen > last.Rparen {
				last = call
			}
		}
		return true
	})
	return last
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

// unfollowedDirectives reports the call-site directives in functions that
// no workflow's step search walked: they would mark nothing.
func (m *packageModel) unfollowedDirectives(ds *diagnostics) {
	for _, bd := range m.bodyDirectives {
		if !m.followed[bd.fn] {
			if bd.d.verb == "allow" {
				p := m.pkg.Fset.Position(bd.d.pos)
				delete(m.allows, lineKey{p.Filename, p.Line}) // reported here, not as unused
			}
			ds.errorf(bd.d.pos, "%s: directive inside %s, which is neither a //resume:workflow nor a function a workflow body calls: a call-site directive only marks calls in a workflow body or in the helpers it calls", bd.d.text, bd.fn.Name.Name)
		}
	}
}

// sortedWorkflows orders workflows by file and position.
func sortedWorkflows(ws []*Workflow) {
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].source != ws[j].source {
			return ws[i].source < ws[j].source
		}
		return ws[i].decl.Pos() < ws[j].decl.Pos()
	})
}

// sanitizeIdent replaces every character of s that cannot appear in a Go
// identifier with '_'.
func sanitizeIdent(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, s)
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
