package resume

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sync"
)

// This file holds the entry points that generated code (the *_resume.go
// files resumegen writes) calls, and nothing else: the contract between
// resumegen's output and this package. A program never calls them itself.
// They change in step with the generator; [SupportPackageIsVersion5] makes
// a skew between the two fail at compile time. The types generated code
// fills in live beside their methods: [WorkflowDef], [StepDef], [Args],
// [ErrorDef], [Policy], [Source].

// SupportPackageIsVersion1 is referenced by generated code. A generated file
// that needs a newer runtime names a constant this package does not have, so
// the skew fails at compile time instead of at run time. For generated code
// only.
const SupportPackageIsVersion1 = true

// SupportPackageIsVersion2 is referenced by code generated since steps are
// called through [Callee] and waits enter the step list; this package still
// runs code that names [SupportPackageIsVersion1]. For generated code only.
const SupportPackageIsVersion2 = true

// SupportPackageIsVersion3 is referenced by code generated since a
// generated file embeds the source it was made from and records its
// fingerprint ([Source]); this package still runs code that names the
// earlier versions, without the check. For generated code only.
const SupportPackageIsVersion3 = true

// SupportPackageIsVersion4 is referenced by code generated since a
// workflow records the versions it descends from ([WorkflowDef.Lineage]);
// this package still runs code that names the earlier versions. For
// generated code only.
const SupportPackageIsVersion4 = true

// SupportPackageIsVersion5 is referenced by code generated since helpers
// of other packages get shared durable copies, which find their steps
// with [Site] and register their source with [RegisterSource], and every
// workflow gets a typed run handle ([SignalRun], [WaitRun]); this package
// still runs code that names the earlier versions. For generated code
// only.
const SupportPackageIsVersion5 = true

// Source is the source a workflow's generated code was made from, as the
// binary embeds it: the generated file copies the workflow's body (and
// the helpers it calls) and records their fingerprint, and the runtime
// computes it again from the embedded files before it starts or executes
// a run of the workflow. A body edited without go generate then fails
// loudly, naming the file and the command, instead of running the old
// copy. For generated code only.
type Source struct {
	// Files are the embedded source files: the workflow's and its
	// helpers', by base name.
	Files fs.FS
	// Decls are the declarations the generated code copied: the workflow
	// first, then its helpers, by file and name (F, or Type.M).
	Decls []SourceDecl
	// Fingerprint is package fingerprint's hash of Decls when the code
	// was generated.
	Fingerprint string

	once  sync.Once
	stale error

	linesMu   sync.Mutex
	declLines map[string]map[string]int // by file: each declaration's line
}

// SourceDecl is one declaration a generated file copied. For generated
// code only.
type SourceDecl struct {
	// Package is the import path of the declaration's package when it is
	// not the workflow's: a helper of another package, whose shared copy
	// lives there and whose source that package's generated code
	// registers ([RegisterSource]).
	Package string
	// File is the base name of the declaring file; Name the function's
	// (F, or Type.M).
	File, Name string
}

// RegisterSource records files, the source embedded by a generated file
// of the package at import path pkg that holds shared copies of its
// helpers, so that the workflows of other packages calling those helpers
// can fingerprint them ([Source]). For generated code only.
func RegisterSource(pkg string, files fs.FS) {
	sources.Lock()
	defer sources.Unlock()
	sources.byPkg[pkg] = append(sources.byPkg[pkg], files)
}

// sources are the embedded source files of the packages holding shared
// copies, filled by generated init functions and read-only afterwards.
var sources = struct {
	sync.RWMutex
	byPkg map[string][]fs.FS
}{byPkg: map[string][]fs.FS{}}

// readSource reads file from the source registered for pkg.
func readSource(pkg, file string) ([]byte, error) {
	sources.RLock()
	defer sources.RUnlock()
	fsys := sources.byPkg[pkg]
	if len(fsys) == 0 {
		return nil, fmt.Errorf("package %s registered no source: its generated file holding the copied helpers is missing or older than this code", pkg)
	}
	var err error
	for _, f := range fsys {
		var b []byte
		if b, err = fs.ReadFile(f, file); err == nil {
			return b, nil
		}
	}
	return nil, err
}

// Site returns the StepDef of the call site site in the definition of the
// workflow whose run ctx holds: a shared copy's wrapper journals its step
// under it. A site the running workflow does not have fails the step,
// naming both, when it is executed: the copy is newer or older than the
// workflow's generated code. Outside a run the StepDef is not used: the
// step's function is called as written. For generated code only.
func Site(ctx context.Context, site string) *StepDef {
	st := stateFrom(ctx)
	if st == nil {
		return &StepDef{Name: site, Site: site}
	}
	if def := st.def.sites[site]; def != nil {
		return def
	}
	return &StepDef{Name: site, Site: site, missing: true}
}

// Register records def as the durable form of the workflow function fn, so
// that [Engine.Start] and [Run] accept fn itself (unless def is Old: an old
// version only executes the runs pinned to it). A workflow identity has
// one current version and any number of old ones. Register panics when fn
// is not a function, when an identity gets two current versions or one
// version twice, and when an alias names another workflow. For generated
// code only.
func Register(fn any, def *WorkflowDef) {
	def.indexSites()
	key := funcName(fn)
	if key == "" {
		panic(fmt.Sprintf("resume: Register(%T): not a function", fn))
	}
	registry.Lock()
	defer registry.Unlock()
	if err := register(key, def); err != nil {
		panic("resume: " + err.Error())
	}
}

// Call runs one step that returns a result and an error. Inside a run it
// returns the journaled outcome of a step the body received before (a
// result, or a final failure: the value returned with it and the error),
// and otherwise executes fn under the step's policy and journals the
// outcome. On first execution it returns what fn returned, the value also
// beside an error. Outside a run it calls fn. For generated code only.
func Call[T any](ctx context.Context, def *StepDef, fn func(context.Context) (T, error)) (T, error) {
	return call(ctx, def, stepKey{}, fn)
}

// CallKey is [Call] for a call site with key=EXPR: the execution's journal
// key is Name[key] instead of its occurrence number, so a loop over owners
// is keyed by owner whatever their order. A key used twice in one run is an
// error: the second execution would otherwise replay the first's result.
// For generated code only.
func CallKey[T any](ctx context.Context, def *StepDef, key string, fn func(context.Context) (T, error)) (T, error) {
	return call(ctx, def, stepKey{value: key, set: true}, fn)
}

// Call0 runs one step that returns only an error; see [Call]. For generated
// code only.
func Call0(ctx context.Context, def *StepDef, fn func(context.Context) error) error {
	return call0(ctx, def, stepKey{}, fn)
}

// Call0Key is [Call0] for a call site with key=EXPR; see [CallKey]. For
// generated code only.
func Call0Key(ctx context.Context, def *StepDef, key string, fn func(context.Context) error) error {
	return call0(ctx, def, stepKey{value: key, set: true}, fn)
}

// Unwind stops the durable body at a step that returns no error, with the
// error its journaled call returned: the run stopped (its lease was lost,
// a person must look, the worker is draining), or the step failed for good
// (a step with no error result fails only by panicking). It panics; the
// engine recovers the panic and ends the run's entry as err says, as if
// the body had returned err: the run stops, or fails with the step's
// failure (which a retry executes again). For generated code only.
func Unwind(err error) {
	panic(&unwinding{err: err})
}

// Callee returns the function a step's call executes, fn: generated code
// calls resume.Callee(ctx, Fetch)(ctx, id) inside the step's journaled
// call, so that a test harness (package resumetest) can see each execution
// and hand the step a test double of fn's type instead. For generated
// code only.
func Callee[F any](ctx context.Context, fn F) F { return callee(ctx, fn) }

// CallChild runs the registered workflow wf as a child run of the run in
// ctx: the call's step is def, args are the child's input (its parameters
// after the context). Inside a run it returns the outcome the parent's body
// received before, or executes the child to its end and journals its
// outcome. Outside a run it calls fn, the plain call. For generated code
// only.
func CallChild[T any](ctx context.Context, def *StepDef, wf any, fn func(context.Context) (T, error), args ...any) (T, error) {
	return callChild(ctx, def, stepKey{}, wf, fn, args)
}

// CallChildKey is [CallChild] for a call site with key=EXPR; see
// [CallKey]. For generated code only.
func CallChildKey[T any](ctx context.Context, def *StepDef, key string, wf any, fn func(context.Context) (T, error), args ...any) (T, error) {
	return callChild(ctx, def, stepKey{value: key, set: true}, wf, fn, args)
}

// CallChild0 is [CallChild] for a workflow that returns only an error. For
// generated code only.
func CallChild0(ctx context.Context, def *StepDef, wf any, fn func(context.Context) error, args ...any) error {
	_, err := callChild(ctx, def, stepKey{}, wf, func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) }, args)
	return err
}

// CallChild0Key is [CallChild0] for a call site with key=EXPR. For
// generated code only.
func CallChild0Key(ctx context.Context, def *StepDef, key string, wf any, fn func(context.Context) error, args ...any) error {
	_, err := callChild(ctx, def, stepKey{value: key, set: true}, wf, func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) }, args)
	return err
}

// ReceiverType is the receiver type of a workflow that is a method of R,
// for [WorkflowDef.Receiver]. For generated code only.
func ReceiverType[R any]() reflect.Type { return reflect.TypeFor[R]() }

// Receiver returns the value the engine executing ctx's run was given for
// methods of R ([WithReceiver]). For generated code only.
func Receiver[R any](ctx context.Context) (R, error) {
	var zero R
	st := stateFrom(ctx)
	if st == nil {
		return zero, errors.New("resume: Receiver outside a run")
	}
	r, ok := st.e.receivers[reflect.TypeFor[R]()].(R)
	if !ok {
		return zero, st.stopf("run %s: %w", st.run.RunID, st.e.canRun(st.def))
	}
	return r, nil
}

// ErrorSentinel makes the sentinel err survive the journal under id, its
// package path, a dot and its name ("example.com/bank.ErrDeclined"). For
// generated code only.
func ErrorSentinel(id string, err error) ErrorDef {
	return ErrorDef{id: id, sentinel: err}
}

// ErrorType makes values of the error type E survive the journal under id,
// the type as go/types prints it ("*example.com/bank.CardError"). E's
// value must round-trip through encoding/json; its exported fields of type
// error are journaled as errors of their own. For generated code only.
func ErrorType[E error](id string) ErrorDef {
	return ErrorDef{
		id: id,
		match: func(node error) (error, bool) {
			if v, ok := node.(E); ok {
				return v, true
			}
			if a, ok := node.(interface{ As(any) bool }); ok {
				var v E
				if a.As(&v) {
					return v, false
				}
			}
			return nil, false
		},
		decode: func(value json.RawMessage, fields func(reflect.Value) error) (error, error) {
			var v E
			if err := json.Unmarshal(value, &v); err != nil {
				return nil, err
			}
			if fields != nil {
				rv := reflect.ValueOf(&v).Elem()
				if rv.Kind() == reflect.Pointer && !rv.IsNil() {
					rv = rv.Elem()
				}
				if rv.Kind() != reflect.Struct {
					return nil, fmt.Errorf("%s has no fields to restore", id)
				}
				if err := fields(rv); err != nil {
					return nil, err
				}
			}
			return v, nil
		},
	}
}

// SignalRun sends the event name with payload to run runID of the
// workflow def, as [Engine.Signal] does, after checking that the run is
// one of def's. Generated run handles call it, with the payload type the
// workflow's [Await] of name declares, so a wrong name or payload type
// does not compile. For generated code only.
func SignalRun(ctx context.Context, e *Engine, def *WorkflowDef, runID, name string, payload any) error {
	if err := checkWorkflow(ctx, e, def, runID); err != nil {
		return fmt.Errorf("signal %s: %w", name, err)
	}
	return e.Signal(ctx, runID, name, payload)
}

// WaitRun waits for run runID of the workflow def to finish, as
// [Engine.Wait] does, and returns its output decoded as Out, after
// checking that the run is one of def's. For generated code only.
func WaitRun[Out any](ctx context.Context, e *Engine, def *WorkflowDef, runID string) (Out, error) {
	var out Out
	if err := checkWorkflow(ctx, e, def, runID); err != nil {
		return out, fmt.Errorf("wait: %w", err)
	}
	res, err := e.Wait(ctx, runID)
	if err != nil {
		return out, err
	}
	if err := res.Decode(&out); err != nil {
		return out, fmt.Errorf("run %s: output: %w", runID, err)
	}
	return out, nil
}

// WaitRun0 is [WaitRun] for a workflow that returns only an error. For
// generated code only.
func WaitRun0(ctx context.Context, e *Engine, def *WorkflowDef, runID string) error {
	if err := checkWorkflow(ctx, e, def, runID); err != nil {
		return fmt.Errorf("wait: %w", err)
	}
	_, err := e.Wait(ctx, runID)
	return err
}
