// Package model is the generator's model of a package's workflows: the
// stage after the directives and the call analysis, whose result every
// later stage reads and none writes.
//
// [Build] walks each workflow's body in source order, and the helpers it
// calls, and records what it finds as data: each journaled call (a step,
// a child workflow, a wait) with where it stands, the helpers to copy,
// every function the walk entered, the error identities the bodies test,
// the JSON shapes of what is journaled, the version, the identity in the
// journal, and the names of what the generated code declares. It judges
// nothing: a journaled call in a goroutine is recorded with that fact
// (Where), and the checks refuse it. Only what the model can name goes
// into a workflow's Steps, the list the version hashes and the emitter
// renders; the checks read everything.
package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/resumegen/resumegen/generator/internal/calls"
	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Package is the model of one package.
type Package struct {
	// Load is the package as loaded and type-checked.
	Load *load.Package
	// Directives are its directives; Calls the call analysis of the
	// packages read from source.
	Directives *directive.Set
	Calls      *calls.Analysis
	// Module holds the models of every package read from source.
	Module *Module
	// Workflows are its workflows, by file and position.
	Workflows []*Workflow
	// Reached holds the function declarations of the package that some
	// workflow's step search walked: the workflows and the helpers they
	// call, of any package.
	Reached map[*ast.FuncDecl]bool
	// built says Build modelled the workflows.
	built bool
}

// Workflow is one //resume:workflow function as the generator understood
// it.
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
	// is a version of; "" otherwise.
	OldVersionOf string
	// Current is, for an old version, the workflow it is a version of,
	// when old-version-of= names one it can be (see the identity check).
	Current *Workflow
	// Version is the hash of the step signature list; see Canonical.
	Version string
	// Lineage lists the versions the workflow descends from, newest first,
	// from the package's generated files (see lineages); it does not enter
	// the version. Prior is the workflow's current definition recorded
	// there, nil for a workflow generated for the first time.
	Lineage []string
	Prior   *load.Prior
	// Steps are the journaled points of the workflow in source order:
	// every step, child and wait call site the journal can order and
	// name, in the body and in the helpers it calls.
	Steps []*Step
	// Shape is the JSON shape of the run's input (the parameters after
	// the context) and output, one line a field; it enters the version.
	Shape []string
	// Graph is the workflow's step graph, a Mermaid flowchart; it does
	// not enter the version.
	Graph string
	// SourceDecls are the declarations the generated code copies, the
	// workflow first, then its helpers, by file base name and name (F, or
	// Type.M); Fingerprint is their fingerprint (package
	// internal/fingerprint), which the runtime checks against the source
	// the binary embeds. FingerprintErr says why it could not be taken.
	SourceDecls    []SourceDecl
	Fingerprint    string
	FingerprintErr error

	// Fn, Decl, File and Source are the workflow's function, declaration,
	// file and the file's absolute path; Sig its signature.
	Fn     *types.Func
	Decl   *ast.FuncDecl
	File   *ast.File
	Source string
	Sig    *types.Signature
	// Recv is the receiver's type of a workflow that is a method of a
	// named, non-generic type (the engine runs it on the value given with
	// resume.WithReceiver), else nil. BadRecv marks a method of a generic
	// or unnamed type.
	Recv    types.Type
	BadRecv bool
	// Directive is the //resume:workflow that marks the function.
	Directive directive.Directive

	// Calls are every journaled call the step search met, in the order
	// it met them: Steps, and those the journal cannot order (Where is
	// set) or whose name an earlier call site took (Clash is set).
	Calls []*Step
	// Helpers are the durable copies of the package's functions that the
	// body reaches and that reach steps, in the order the search entered
	// them; Shared are the shared copies of functions of other packages
	// (see Helper.Shared) it reaches, in the same order. HelperCalls maps
	// the Lparen of each call of one, in the body or in a helper, to the
	// call of its copy.
	Helpers     []*Helper
	Shared      []*Helper
	HelperCalls map[token.Pos]*HelperCall
	// Blocked are the calls of functions reaching a step that the search
	// did not enter: in a place the journal cannot order (Where), or of a
	// helper the generator cannot copy (Uncopyable).
	Blocked []*HelperCall
	// Funcs are the workflow's body and every function of the package the
	// step search entered from it, whether they reach steps or not, in
	// entry order.
	Funcs []*Func
	// ErrorTests are the tests of errors the bodies make; ErrorIDs the
	// identities they test, sorted by ID.
	ErrorTests []ErrorTest
	ErrorIDs   []ErrorIdentity

	pkg    *Package
	callAt map[token.Pos]*Step // Calls by Lparen
}

// Func is a function body the step search walked for a workflow.
type Func struct {
	Decl *ast.FuncDecl
	// Fn is the function, nil for the workflow's own body.
	Fn *types.Func
	// Pkg is the package declaring it: the workflow's, or another read
	// from source.
	Pkg *Package
	// Workflow is the workflow's name.
	Workflow string
	// Path are the helpers from the workflow body to here, empty for the
	// body itself; a function of another package is named pkg.F.
	Path []string
	// EnteredAt is the Lparen of the call where the search entered the
	// function, NoPos for the body; From is the function holding that
	// call.
	EnteredAt token.Pos
	From      *Func
	// Shared says the function's journaled calls go through a shared copy
	// (Helper.Shared): it is of another package than the workflow's, or
	// called from such a function.
	Shared bool
}

// Info is the types of the function's package.
func (f *Func) Info() *types.Info { return f.Pkg.Load.TypesInfo }

// Via names, for a message about code in a helper, the helper and how the
// workflow reaches it: " (in pickOwner, called from Onboard via notifyAll
// → pickOwner)"; it is "" in the workflow body itself.
func (f *Func) Via() string {
	if len(f.Path) == 0 {
		return ""
	}
	return fmt.Sprintf(" (in %s, called from %s via %s)", f.Path[len(f.Path)-1], f.Workflow, strings.Join(f.Path, " → "))
}

// Where says why the journal cannot order a journaled call (or a call of a
// helper reaching one), Ordered when it can.
type Where int

const (
	// Ordered is a call the journal replays in the body's order.
	Ordered Where = iota
	// InGo is inside a go statement.
	InGo
	// InFuncLit is inside a function literal not called where written.
	InFuncLit
	// InSelect is inside a select statement.
	InSelect
	// InMapRange is in a range over a map.
	InMapRange
	// InMapSeq is in a range over an iterator yielding in map order
	// (WhereDetail names it: maps.Keys, slices.Collect(maps.Keys)).
	InMapSeq
	// InChanRange is in a range over a channel the body does not own.
	InChanRange
	// InDefer is a wait (or a call of a helper reaching one) in a
	// deferred call; a deferred step is ordered.
	InDefer
	// InMapNoKey is a step or child call without key= in the function
	// literal handed to resume.Map: an item dispatched again on a later
	// entry would shift the occurrence numbers of unkeyed calls.
	InMapNoKey
	// InMapWait is a wait in the function literal handed to resume.Map.
	InMapWait
)

// Step is one journaled call site of a workflow: a step, a child
// workflow's call, or a wait.
type Step struct {
	// Name is the step's journal name.
	Name string
	// Callee is the fully qualified callee: example.com/billing.ScoreAll,
	// example.com/billing.(*Client).Notify.
	Callee string
	// Signature is the callee's type without receiver, qualified by
	// package name and unqualified for the workflow's own package.
	Signature string
	// Policy is default, once, tx, or child for a child workflow's call.
	Policy string
	// Shape is the JSON shape of what the step journals, one line a
	// field; it enters the version.
	Shape []string
	// JSON is the type of the value the step journals, written as Shape
	// writes types, or "null" for a step that journals only null.
	JSON string
	// Key is the call site's key= expression as hashed into the version,
	// or "" for a step journaled by occurrence.
	Key string
	// RenamedFrom are the step's earlier names (renamed-from=).
	RenamedFrom []string
	// Pos is the call site, "dir/file.go:42" relative to the module root,
	// or "" when the module root is unknown. RelPos is the same place
	// relative to the declaration holding the call, "dir/file.go:Onboard+12"
	// (line 12 of Onboard's, counted from its func keyword): the generated
	// code records that, so an edit above the declaration does not rewrite
	// it, and the runtime resolves it against the source it embeds.
	Pos    string
	RelPos string

	// Opts are the step's options: its declaration's, overridden by the
	// call site's; Site is the call-site directive, nil without one.
	Opts directive.StepOptions
	Site *directive.Directive
	// Call is the call expression; In the function whose body holds it.
	Call *ast.CallExpr
	In   *Func
	// Where says why the journal cannot order the call; Deferred that it
	// is in a deferred call.
	Where       Where
	WhereDetail string
	Deferred    bool
	// Clash is the earlier call site that took the step's name.
	Clash *Step
	// Wait is the runtime's wait the call is, NotWait for a step.
	Wait runtimeapi.Wait
	// Child marks a call of a workflow: a child run.
	Child bool
	// Fn is the callee; Sig its signature, instantiated for a generic
	// callee, whose type arguments are TypeArgs.
	Fn       *types.Func
	Sig      *types.Signature
	TypeArgs *types.TypeList
	// NoTypeArgs marks a generic call whose type arguments go/types did
	// not record.
	NoTypeArgs bool
	// Display is the callee as the manifest comment shows it; CanonSig the
	// signature with fully qualified types.
	Display  string
	CanonSig string
	// MethodExpr marks a step called as a method expression (T.M(x)).
	MethodExpr bool
	// Recv is the receiver expression of a method call, RecvType the
	// wrapper's receiver parameter type, and AddrRecv says the wrapper
	// takes &recv (a pointer method on an addressable value).
	Recv     ast.Expr
	RecvType types.Type
	AddrRecv bool
	// TakesCtx says the callee's first parameter is a context.Context.
	TakesCtx bool
	// Values are the indices of the results the journal carries (all but
	// a trailing error); HasErr says the last result is an error.
	// ResultsValid is false when an error stands anywhere else.
	Values       []int
	HasErr       bool
	ResultsValid bool
	// Pointers are the callee's pointer parameters (after the context),
	// with what the journal does with their pointees; OutArgs the indices
	// of those journaled after the call and written back on replay.
	Pointers []Pointer
	OutArgs  []int
	// Refs are the callee's other parameters through which the step may
	// change what the body handed it (a slice, a map, a channel, a
	// function, a writer, a struct holding one), with what the callee's
	// code may do through them; RefArgs the indices of the slices and maps
	// journaled after the call and written back on replay (copied into the
	// body's slice, the body's map emptied and refilled).
	Refs    []Ref
	RefArgs []int
	// KeyExpr is the call site's key=EXPR, type-checked in the call's
	// scope, or nil.
	KeyExpr *Key
	// AwaitName is the event name expression of an Await; AwaitConst its
	// constant value, or "" when it is not a constant string.
	AwaitName  ast.Expr
	AwaitConst string
	// ChildQueue is, for a child call, the queue= of the child workflow
	// ("" for none), and InMap marks a call inside the function literal
	// handed to resume.Map: a detached child, claimed through its queue.
	ChildQueue string
	InMap      bool
	// ChildOld is, for a child call of an old version, the Go name of its
	// current workflow.
	ChildOld string

	// Index is the step's position in Steps, Wrapper the name of its
	// generated wrapper ("" for a wait: its call is not rewritten, and for
	// a call in a shared copy: its wrapper is the copy's, Shared.Wrapper).
	Index   int
	Wrapper string
	// Shared is, for a journaled call in a shared copy of a function of
	// another package (In.Shared), the copy's call site; SiteID its
	// identity, which the StepDef records so that the copy's wrapper
	// finds the step in the running workflow's definition.
	Shared *Site
	SiteID string
}

// Site is one journaled call (not a wait) in the body of a shared copy.
type Site struct {
	// ID is "importpath.F:N", N counting the copy's journaled calls from
	// 0 in source order: the StepDef of each workflow reaching the call
	// carries it (resume.Site finds it there).
	ID string
	// Step is the call as the copy's wrapper needs it, named from the
	// copy's package; its Wrapper is the wrapper's name.
	Step *Step
}

// Pointer is a pointer parameter of a step's callee.
type Pointer struct {
	// Index is the parameter's index; Type its type (the element type of a
	// variadic parameter).
	Index    int
	Type     types.Type
	Variadic bool
	// Err says why JSON cannot carry the pointee entirely, nil when it
	// can (it is then journaled, unless Variadic).
	Err error
	// HoldsResult says why the pointee, which JSON cannot carry, may hold
	// what the step computes ("" for a dependency: a client, a pool);
	// Buffer that it is a buffer the step writes into.
	HoldsResult string
	Buffer      bool
}

// NeedsOut reports whether the step journals a generated out type: it
// writes through pointer parameters or into slices and maps it is handed,
// or returns more than one value.
func (s *Step) NeedsOut() bool { return len(s.OutArgs) > 0 || len(s.RefArgs) > 0 || len(s.Values) > 1 }

// WritesBack lists the journaled slices and maps as the manifest and the
// version show them: "arg2,arg3".
func (s *Step) WritesBack() string {
	var out []string
	for _, i := range s.RefArgs {
		_, key := OutField(i)
		out = append(out, key)
	}
	return strings.Join(out, ",")
}

// Ref is a parameter of a step's callee, not a pointer, through which the
// step may change what the body handed it.
type Ref struct {
	// Index is the parameter's index; Type its type; Kind what it is.
	Index int
	Type  types.Type
	Kind  RefKind
	// Use is what the callee's code may do through it (calls.Unknown for a
	// callee whose body the generator does not read).
	Use calls.Use
	// Unread says the callee's body is not read (another module's, an
	// interface method's): what it does is not known.
	Unread bool
	// Owned says the argument is the body's own: a local variable or a
	// parameter of the function holding the call, a function literal or a
	// method value, rather than package-level state or a dependency.
	Owned bool
	// Err says why JSON cannot carry a slice or map the step writes into.
	Err error
}

// RefKind is what kind of reference a Ref is.
type RefKind int

const (
	RefSlice  RefKind = iota // a slice: its elements
	RefMap                   // a map: its entries
	RefChan                  // a channel
	RefFunc                  // a function, which may be a closure over the body's state
	RefWriter                // an io.Writer-like interface
	RefHolder                // a struct or array holding a slice, a map or a pointer
)

// OutField is the field of the out type holding the pointee of the i-th
// parameter; its JSON key is "argN" with N counted from 1, so that
// renaming the parameter changes nothing in the journal.
func OutField(i int) (name, key string) {
	return fmt.Sprintf("Arg%d", i+1), fmt.Sprintf("arg%d", i+1)
}

// ResultField is the field of the out type holding the step's n-th
// journaled value (from 0): Result when it returns one, Result1, Result2,
// ... when several, with JSON keys to match.
func (s *Step) ResultField(n int) (name, key string) {
	if len(s.Values) == 1 {
		return "Result", "result"
	}
	return fmt.Sprintf("Result%d", n+1), fmt.Sprintf("result%d", n+1)
}

// OutTypeName is the generated type holding what a step with pointer
// parameters or several results journals.
func (s *Step) OutTypeName() string { return s.Wrapper + "Out" }

// What names the step for messages: "step Notify", "child workflow
// Notify (step Notify)" for a call of a workflow, "resume.Sleep" or
// `resume.Await "approval"` for a wait.
func (s *Step) What() string {
	switch {
	case s.Wait == runtimeapi.Await:
		return fmt.Sprintf("resume.Await %q", s.Name)
	case s.Wait != runtimeapi.NotWait:
		return "resume." + s.Fn.Name()
	case !s.Child:
		return "step " + s.Name
	case s.Name != s.Fn.Name():
		return "child workflow " + s.Fn.Name() + " (step " + s.Name + ")"
	}
	return "child workflow " + s.Name
}

// Key is a call site's key=EXPR, type-checked in the call's scope.
type Key struct {
	// Source is EXPR as written; Canonical as hashed into the version.
	Source, Canonical string
	// Expr is EXPR parsed on its own, type-checked with Uses; Err says why
	// it cannot be a key (it does not parse or type-check, or has a type
	// no key may have), nil when it can.
	Expr ast.Expr
	Uses map[*ast.Ident]types.Object
	Err  error
	// Type is EXPR's type (the wrapper's key parameter) and Conv how the
	// wrapper turns it into a string.
	Type types.Type
	Conv KeyConversion
}

// KeyConversion says how a key value becomes the journal key's string.
type KeyConversion int

const (
	KeyString   KeyConversion = iota // string kinds: string(key)
	KeySigned                        // signed integers: strconv.FormatInt
	KeyUnsigned                      // unsigned integers: strconv.FormatUint
	KeyStringer                      // fmt.Stringer: key.String()
)

// Conversion is the predeclared type the wrapper converts the key to
// before formatting it (string, int64 or uint64), "" when it needs none.
func (k *Key) Conversion() string {
	var wide *types.Basic
	switch k.Conv {
	case KeyStringer:
		return ""
	case KeySigned:
		wide = types.Typ[types.Int64]
	case KeyUnsigned:
		wide = types.Typ[types.Uint64]
	default:
		wide = types.Typ[types.String]
	}
	if types.Identical(k.Type, wide) {
		return ""
	}
	return wide.Name()
}

// Helper is a function or method read from source that a workflow body
// reaches and that reaches steps: the generated code holds a durable copy
// of it, whose step calls go to the step wrappers.
//
// A helper of the workflow's own package gets a copy per workflow, in the
// workflow's generated file, whose wrappers name the workflow's steps
// (&resumeW.Steps[i]). A helper of another package of the module (Shared)
// cannot be copied there, since it may name its package's unexported
// identifiers: it gets one copy in its own package's generated file,
// shared by every workflow that reaches it, exported when the function is
// (Resume_F, for other packages to call) and unexported otherwise
// (resume_F, called from other copies of its package). Its wrappers find
// their step in the definition of the workflow running (resume.Site, by
// the call site's ID).
type Helper struct {
	Fn       *types.Func
	Decl     *ast.FuncDecl
	File     *ast.File
	Display  string // pickOwner, Client.notify
	CopyName string // resumeOnboard_pickOwner, Resume_NotifyAll
	// CtxName is the name of the helper's first context.Context
	// parameter, which step calls of callees without one receive, or "".
	CtxName string
	// Pkg is the package declaring the helper, where its copy lives.
	Pkg *Package
	// Shared marks a copy shared by every workflow (see above); Sites are
	// then its journaled calls (waits aside) in source order and Calls
	// its calls of other shared copies, by Lparen.
	Shared bool
	Sites  []*Site
	Calls  map[token.Pos]*HelperCall
}

// HelperCall is a call of a function of the package that reaches a step,
// from the workflow body or a helper.
type HelperCall struct {
	Call   *ast.CallExpr
	Callee *types.Func
	In     *Func
	// Helper is the copy the durable code calls instead (nil for a
	// blocked call); Method says the call is x.m(...), which becomes
	// copy(x, ...), and Addr and Deref adjust x to the method's receiver.
	Helper              *Helper
	Method, Addr, Deref bool
	// Witness is a journaled call the callee reaches; WaitWitness a wait
	// it reaches, for a call in a deferred call (Where is InDefer).
	Witness *ast.CallExpr
	// Where says why the journal cannot order the call.
	Where       Where
	WhereDetail string
	// Uncopyable says why the generator cannot copy the callee.
	Uncopyable Uncopyable
	// Embedded names the embedded fields a promoted method is reached
	// through (Uncopyable is ViaEmbedded).
	Embedded string
}

// Uncopyable is why the generator cannot copy a helper reaching a step.
type Uncopyable int

const (
	// Copyable is a helper the generator copies.
	Copyable Uncopyable = iota
	// Generic is a generic function or a method of a generic type.
	Generic
	// MethodExpression is a method called as a method expression.
	MethodExpression
	// ViaEmbedded is a method promoted through an embedded field.
	ViaEmbedded
	// NoContext is a helper of another package calling a step whose
	// callee takes no context.Context, without a context parameter of its
	// own to pass on.
	NoContext
	// BadKey is a helper of another package with a key= its copy cannot
	// compile.
	BadKey
)

// ErrorTest is a test of an error a workflow's bodies make.
type ErrorTest struct {
	// Pos is where it is refused if it is; What says what it is, for the
	// message ("in errors.Is(err, x)", "type assertion to").
	Pos  token.Pos
	What string
	// Target is, for a comparison or errors.Is, the expression in the
	// sentinel's place, and Sentinel the package-level error variable it
	// names (nil when it names none).
	Target   ast.Expr
	Sentinel *types.Var
	// Type is, for errors.As, errors.AsType, a type assertion or a type
	// switch case, the type tested for.
	Type types.Type
}

// ErrorIdentity is one error identity a workflow body tests: a
// package-level sentinel it compares errors with, or a concrete error
// type it looks for. The generated WorkflowDef lists them so that a step
// error replayed from the journal still matches.
type ErrorIdentity struct {
	// ID is "importpath.Name" for a sentinel, types.TypeString(T, nil)
	// for a type.
	ID       string
	Sentinel *types.Var
	Type     types.Type
}

// Exception is a reviewed exception to the non-determinism checks,
// written as //resume:allow at the end of the offending line. The checks
// find them; the manifest lists them.
type Exception struct {
	// Check is the check it silences: "nondeterministic".
	Check string `json:"check"`
	// What names the call or write, without its position.
	What string `json:"what"`
	// Reason is the reviewer's reason, as written.
	Reason string `json:"reason"`
}

// Pkg is the model of the workflow's package.
func (w *Workflow) Pkg() *Package { return w.pkg }

// SourceVarName is the embedded source files' variable of the generated
// file of the source file named source.
func SourceVarName(source string) string {
	return "resumeSource_" + SanitizeIdent(strings.TrimSuffix(filepath.Base(source), ".go"))
}

// HandleName is the workflow's run handle, the type generated code
// declares for user code to name a run of it by: ApproveRun,
// Service_OnboardRun.
func (w *Workflow) HandleName() string { return load.RunHandleName(w.Name) }

// IsAwait reports whether the journaled call is a resume.Await.
func (s *Step) IsAwait() bool { return s.Wait == runtimeapi.Await }

// SignalMethod is the run handle's method sending the event an Await
// waits for: Signal and the event name's letters and digits, each run of
// them capitalized ("payment-received" → SignalPaymentReceived); "" when
// the name has none.
func (s *Step) SignalMethod() string {
	var b strings.Builder
	up := true
	for _, r := range s.Name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return ""
	}
	return "Signal" + b.String()
}

// DefName, VersionName, BodyName and GraphName are the identifiers the
// generated code declares for the workflow.
func (w *Workflow) DefName() string     { return "resume" + SanitizeIdent(w.Name) }
func (w *Workflow) VersionName() string { return "resume" + SanitizeIdent(w.Name) + "Version" }
func (w *Workflow) BodyName() string    { return "resume" + SanitizeIdent(w.Name) + "Body" }
func (w *Workflow) GraphName() string   { return "resume" + SanitizeIdent(w.Name) + "Graph" }

// SanitizeIdent replaces every character of s that cannot appear in a Go
// identifier with '_'.
func SanitizeIdent(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
