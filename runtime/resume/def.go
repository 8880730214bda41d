package resume

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Policy is a step's delivery guarantee.
type Policy int

const (
	// PolicyDefault executes the step, then journals its result: at least
	// once, with a stable idempotency key.
	PolicyDefault Policy = iota
	// PolicyOnce commits an in_flight row before executing the step: at most
	// once; an unknown outcome is parked for a person.
	PolicyOnce
	// PolicyTx runs the step in a transaction of the journal's database that
	// also commits its journal row: exactly once for database effects.
	PolicyTx
)

// String returns the policy as written in directives and manifests:
// "default", "once" or "tx".
func (p Policy) String() string {
	switch p {
	case PolicyDefault:
		return "default"
	case PolicyOnce:
		return "once"
	case PolicyTx:
		return "tx"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// StepDef describes one step of a workflow as the generator saw it. For
// generated code only.
type StepDef struct {
	// Name is the step's journal name (the callee's name or name=).
	Name string
	// Callee is the qualified name of the called function or method.
	Callee string
	// Signature is the callee's type, as shown in the manifest.
	Signature string
	// Policy is the step's delivery guarantee.
	Policy Policy
	// Attempts is the total number of attempts (retry=N); 0 means 1.
	Attempts int
	// BackoffMin and BackoffMax bound the exponential backoff between
	// attempts; zero values take DefaultBackoffMin and DefaultBackoffMax.
	BackoffMin, BackoffMax time.Duration
	// Timeout bounds each attempt; 0 means no timeout of its own.
	Timeout time.Duration
	// Child marks a call of another workflow: the step runs it as a child
	// run (see [CallChild]) and journals its outcome.
	Child bool
	// Shape is the JSON shape of what the step journals, one field a line
	// ("result Priced: Cents int"), as the generator hashed it into the
	// workflow's version.
	Shape []string
	// JSON is the Go type of the value the step journals, written as
	// Shape's lines write types ("[]Record", "Priced", "string"; for a
	// step with pointer parameters "struct{arg3 *Info; result int}"), or
	// "null" for a step that journals nothing but null (it returns only an
	// error). With Shape it says which JSON a person may give as the
	// step's result ([CheckStepResult]). It is derived from the signature,
	// so it does not enter the version; "" in code generated before it was
	// recorded.
	JSON string
	// Key is the step's key= expression as written, "" for a step
	// journaled by occurrence (Name, Name#2, ...). It is part of the
	// version.
	Key string
	// RenamedFrom lists the step's earlier names (renamed-from=): rows
	// journaled under them count for this step, and a run that moves to
	// this version has them relabelled. It does not enter the version.
	RenamedFrom []string
	// Pos is the step's call site, "dir/file.go:42" relative to the module
	// root; it does not enter the version.
	Pos string
	// Deferred marks a call site inside a deferred call (defer, or a
	// helper a deferred call reaches): a saga's compensation. In a run
	// that must stop (cancelled, or past its deadline) it still executes,
	// while every other step call returns the stop's *StopError. It does
	// not enter the version.
	Deferred bool
	// Site is, for a step called in a helper of another package than the
	// workflow's, the call site's identity ("example.com/app/util.Notify:0"):
	// the helper's durable copy, generated once in its own package for
	// every workflow that calls it, finds its step by it ([Site]). It is
	// "" for a call in the workflow's own package, whose wrapper names the
	// step. It does not enter the version.
	Site string

	// missing marks the StepDef [Site] returns for a site the running
	// workflow does not have.
	missing bool
}

// LineageLimit is how many versions resumegen keeps in a workflow's
// [WorkflowDef.Lineage]: a run pinned to a version that fell out of it
// (more than LineageLimit step-list changes ago) is left alone by the
// workers of newer code, and resumectl check-deploy names it; an operator
// moves it with resumectl runs accept-version.
const LineageLimit = 32

// Default backoff bounds for a step that sets retry=N without backoff=.
const (
	DefaultBackoffMin = 100 * time.Millisecond
	DefaultBackoffMax = 10 * time.Second
)

// indexSites makes the map of the steps with a Site, once, at Register.
func (w *WorkflowDef) indexSites() {
	if w.sites != nil {
		return
	}
	w.sites = map[string]*StepDef{}
	for i := range w.Steps {
		if s := &w.Steps[i]; s.Site != "" {
			w.sites[s.Site] = s
		}
	}
}

func (s *StepDef) attempts() int {
	if s.Attempts < 1 {
		return 1
	}
	return s.Attempts
}

// WorkflowDef is a workflow as registered by generated code. For generated
// code only.
type WorkflowDef struct {
	// Package is the import path of the workflow's package.
	Package string
	// Name is the workflow function's name.
	Name string
	// ID is the workflow's stable name (name=), its identity in the
	// journal; "" means Package + "." + Name.
	ID string
	// Aliases are earlier identities of the workflow (its import-path name
	// once name= is set): runs stored under them are this workflow's.
	Aliases []string
	// Old marks an old version kept so that the runs pinned to it finish
	// (old-version-of=): it executes them and never starts a run. Name is
	// then the Go function that holds it, and ID the current workflow's
	// identity.
	Old bool
	// Version is the hash of the step signature list.
	Version string
	// Lineage lists the versions this version descends from, newest
	// first: the version the workflow had in its previous generated file,
	// then the lineage recorded there, and the versions of the old
	// versions kept beside it (old-version-of=), as resumegen found them
	// when it regenerated (it keeps the newest [LineageLimit]). A run
	// pinned to one of them is older than this program's: a worker claims
	// it when no live process advertises its version, and continues it on
	// this version (package deploy's rule) or parks it. A run pinned to a
	// version that is neither this one, an old version kept here, nor in
	// the lineage of one of them is newer, or of another line of the
	// code: it is left alone, whatever order the journal saw the versions
	// in. Nil in code generated before the lineage was recorded: such a
	// program takes only the runs of its own versions.
	Lineage []string
	// Steps lists the steps in source order.
	Steps []StepDef
	// Graph is the workflow's step graph, a Mermaid flowchart drawn by
	// resumegen.
	Graph string
	// Shape is the JSON shape of the run's input and output, one field a
	// line ("input arg 2 Order: ID string"), as the generator hashed it
	// into Version.
	Shape []string
	// Errors are the error identities the workflow body tests (sentinels
	// it compares with errors.Is, == or a switch; types it tests with
	// errors.As, a type assertion or a type switch), so that a step error
	// replayed from the journal still matches them. They change no journal
	// key and do not enter Version.
	Errors []ErrorDef
	// Receiver is, for a workflow that is a method, its receiver's type:
	// the engine runs it on the value given with [WithReceiver].
	Receiver reflect.Type
	// Source is the source the generated code was made from, checked
	// before a run of the workflow starts or executes (see [Source]); nil
	// in code generated before it was recorded.
	Source *Source
	// Timeout is the workflow's run deadline (//resume:workflow
	// timeout=D), counted from a run's creation by the journal's clock; 0
	// means none. [WithRunTimeout] overrides it for the runs a context
	// starts. A run past it stops as a cancelled one does (its deferred
	// steps execute) and fails with [ErrDeadline]. It does not enter the
	// version.
	Timeout time.Duration
	// Queue is the queue the workflow's runs are claimed through
	// (//resume:workflow queue=NAME), "" for none: a queue's limits
	// ([WithQueues]) bound how many of its runs execute at once across
	// every worker of the journal, per key ([WithQueueKey]) too, and how
	// many start per period; its runs are claimed by priority
	// ([WithPriority]), then oldest first. It does not enter the version.
	Queue string
	// Run decodes the run's input and calls the durable body.
	Run func(ctx context.Context, args Args) (any, error)

	// sites are the Steps with a Site, by Site, made by Register.
	sites map[string]*StepDef
}

// QualifiedName is the workflow's identity in the journal: its ID, or the
// package path, a dot, and the function name.
func (w *WorkflowDef) QualifiedName() string {
	if w.ID != "" {
		return w.ID
	}
	return w.Package + "." + w.Name
}

// Manifest renders what the generator hashed into Version, one line each:
// first the JSON shape of the run's input and output, then each step,
// "Name Callee Signature Policy", followed by the type of the value it
// journals, "Name: journals Priced", and the JSON shape of that value,
// "Name: result Priced: Cents int". A manifest stored before shapes were
// recorded has the step lines only, so a diff against it shows the same
// steps and the shapes added.
func (w *WorkflowDef) Manifest() string {
	var b strings.Builder
	for _, l := range w.Shape {
		b.WriteString(l + "\n")
	}
	for _, s := range w.Steps {
		fmt.Fprintf(&b, "%s %s %s %s\n", s.Name, s.Callee, s.Signature, s.Policy)
		if s.JSON != "" {
			fmt.Fprintf(&b, "%s: journals %s\n", s.Name, s.JSON)
		}
		for _, l := range s.Shape {
			fmt.Fprintf(&b, "%s: %s\n", s.Name, l)
		}
	}
	return b.String()
}

// Args is a run's input: the workflow's parameters after the context, as a
// JSON array. For generated code only.
type Args json.RawMessage

// Decode decodes the arguments into the pointers, one per parameter. An
// input that does not decode is a corrupt journal row: the run parks for a
// person instead of failing.
func (a Args) Decode(ptrs ...any) error {
	var raw []json.RawMessage
	if len(a) > 0 {
		if err := json.Unmarshal(a, &raw); err != nil {
			return &inputError{fmt.Errorf("decode workflow input: %w", err)}
		}
	}
	if len(raw) != len(ptrs) {
		return &inputError{fmt.Errorf("decode workflow input: have %d arguments, the workflow takes %d", len(raw), len(ptrs))}
	}
	for i, p := range ptrs {
		if err := json.Unmarshal(raw[i], p); err != nil {
			return &inputError{fmt.Errorf("decode workflow input argument %d: %w", i+1, err)}
		}
	}
	return nil
}

// inputError is a run input that does not decode into the workflow's
// parameters.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

func encodeArgs(args []any) (Args, error) {
	if args == nil {
		args = []any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encode workflow input: %w", err)
	}
	return b, nil
}

// registry maps workflows to their definitions. Generated init functions
// fill it; it is read-only afterwards, so it is the one process-wide table
// the package keeps, like database/sql's drivers.
var registry = struct {
	sync.RWMutex
	byFunc   map[string]*WorkflowDef            // runtime function name of the original
	byName   map[string]*WorkflowDef            // identity → its current (not Old) version
	versions map[string]map[string]*WorkflowDef // identity → version → def, current and old
	aliases  map[string]string                  // earlier identity → identity
}{
	byFunc: map[string]*WorkflowDef{}, byName: map[string]*WorkflowDef{},
	versions: map[string]map[string]*WorkflowDef{}, aliases: map[string]string{},
}

// Lookup returns the registered definition of the current version of the
// workflow with identity name (see [WorkflowDef.QualifiedName]), or of an
// earlier identity of it (see [WorkflowDef.Aliases]).
func Lookup(name string) (*WorkflowDef, bool) {
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.byName[identityOf(name)]
	return d, ok
}

// lookupVersion returns the registered definition of version of the
// workflow with identity or alias name, current or old.
func lookupVersion(name, version string) (*WorkflowDef, bool) {
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.versions[identityOf(name)][version]
	return d, ok
}

// identityOf returns the identity of the workflow name names: name, or
// the identity it is an alias of. The caller holds the registry's lock.
func identityOf(name string) string {
	if id, ok := registry.aliases[name]; ok {
		return id
	}
	return name
}

// register adds def, the definition of the function named key, to the
// registry, or says why it cannot be. The caller holds the registry's
// lock.
func register(key string, def *WorkflowDef) error {
	id := def.QualifiedName()
	if err := checkNames(def); err != nil {
		return fmt.Errorf("workflow %s: %w", id, err)
	}
	if other, ok := registry.versions[id][def.Version]; ok {
		return fmt.Errorf("workflow %s: version %s registered twice (by %s.%s and %s.%s)", id, def.Version, other.Package, other.Name, def.Package, def.Name)
	}
	if cur, ok := registry.byName[id]; ok && !def.Old {
		return fmt.Errorf("workflow %s registered twice (by %s.%s and %s.%s): one current version per identity, mark the other old-version-of=", id, cur.Package, cur.Name, def.Package, def.Name)
	}
	if other, ok := registry.aliases[id]; ok {
		return fmt.Errorf("workflow %s: its identity is an earlier name of workflow %s", id, other)
	}
	for _, a := range def.Aliases {
		if other, ok := registry.aliases[a]; (ok && other != id) || registry.versions[a] != nil {
			return fmt.Errorf("workflow %s: its earlier name %s is taken by workflow %s", id, a, identityOf(a))
		}
	}
	if registry.versions[id] == nil {
		registry.versions[id] = map[string]*WorkflowDef{}
	}
	registry.versions[id][def.Version] = def
	if !def.Old {
		registry.byName[id] = def
	}
	for _, a := range def.Aliases {
		registry.aliases[a] = id
	}
	registry.byFunc[key] = def
	return nil
}

// checkNames refuses a definition whose names the journal would not
// store: its identity, aliases, version or a step's name.
func checkNames(def *WorkflowDef) error {
	for _, name := range append([]string{def.QualifiedName()}, def.Aliases...) {
		if err := journal.CheckWorkflowName(name); err != nil {
			return err
		}
	}
	if len(def.Version) > journal.MaxVersionBytes {
		return fmt.Errorf("version %q is longer than %d bytes (journal.MaxVersionBytes)", def.Version, journal.MaxVersionBytes)
	}
	for _, s := range def.Steps {
		if err := journal.CheckStepName(s.Name); err != nil {
			return err
		}
	}
	return nil
}

// registered lists every registered definition, current and old.
func registered() []*WorkflowDef {
	registry.RLock()
	defer registry.RUnlock()
	var out []*WorkflowDef
	for _, vs := range registry.versions {
		for _, d := range vs {
			out = append(out, d)
		}
	}
	return out
}

func lookupFunc(fn any) (*WorkflowDef, error) {
	key := funcName(fn)
	if key == "" {
		return nil, fmt.Errorf("resume: %T is not a workflow function", fn)
	}
	registry.RLock()
	defer registry.RUnlock()
	d, ok := registry.byFunc[key]
	if !ok {
		return nil, fmt.Errorf("resume: %s is not a registered workflow: mark it //resume:workflow and run go generate", key)
	}
	return d, nil
}

// lookupStart is lookupFunc for a function that starts a run: an old
// version kept to drain its runs is refused, naming the current workflow.
func lookupStart(fn any) (*WorkflowDef, error) {
	d, err := lookupFunc(fn)
	if err != nil {
		return nil, err
	}
	if err := d.staleErr(); err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	if !d.Old {
		return d, nil
	}
	cur := "its current version is not registered"
	if c, ok := Lookup(d.QualifiedName()); ok {
		cur = "start " + c.Package + "." + c.Name + " instead"
	}
	return nil, fmt.Errorf("resume: %s.%s is version %s of workflow %s, kept so that the runs pinned to it finish (old-version-of=): it starts no run; %s",
		d.Package, d.Name, d.Version, d.QualifiedName(), cur)
}

func funcName(fn any) string {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return ""
	}
	f := goruntime.FuncForPC(v.Pointer())
	if f == nil {
		return ""
	}
	// A method value (svc.Onboard) names its method expression
	// ((*Service).Onboard), under which the method was registered.
	return strings.TrimSuffix(f.Name(), "-fm")
}
