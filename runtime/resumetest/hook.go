package resumetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/resumegen/resumegen/runtime/internal/stephook"
)

// Execution is one execution of a step's code in a run the harness
// executed: one attempt, of the step's function or of its double.
type Execution struct {
	RunID   string
	StepKey string // Name, Name#2, Name[key]
	Name    string
	Policy  string // default, once or tx
	Attempt int
	// Double is true when a test double executed in place of the step's
	// function.
	Double bool
	// OK is true when the code returned without an error or a panic.
	OK bool
}

// recorder is the hook the harness puts in its runs' context: it hands
// steps their doubles and records each execution, and each commit of a
// tx step's transaction (see crashJournal).
type recorder struct {
	doubles map[string]any
	fail    func(format string, args ...any)
	// dead is set while a crashed process's goroutine unwinds: a step
	// it reaches (a deferred call of its body) executes nothing.
	dead atomic.Bool

	mu      sync.Mutex
	execs   []Execution
	results map[string]json.RawMessage // by run and step key: the last successful execution's value
	commits map[string]int             // by run and step key
	// paths are, by run, the step keys its body's latest entry reached, in
	// order, executed or replayed; entries identify those entries.
	paths   map[string][]string
	entries map[string]any
}

func newRecorder(doubles map[string]any, fail func(string, ...any)) *recorder {
	return &recorder{doubles: doubles, fail: fail, results: map[string]json.RawMessage{}, commits: map[string]int{},
		paths: map[string][]string{}, entries: map[string]any{}}
}

func execKey(runID, stepKey string) string { return runID + "\x00" + stepKey }

// Reached implements stephook.Hook: a step reached in another entry of
// the run's body than the last one starts the path anew (the run resumed).
func (r *recorder) Reached(s stephook.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries[s.RunID] != s.Entry {
		r.entries[s.RunID] = s.Entry
		r.paths[s.RunID] = nil
	}
	r.paths[s.RunID] = append(r.paths[s.RunID], s.StepKey)
}

// path returns the step keys the latest entry of run runID reached.
func (r *recorder) path(runID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths[runID]...)
}

func (r *recorder) runs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id := range r.paths {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Callee implements stephook.Hook.
func (r *recorder) Callee(s stephook.Step, fn any) any {
	if r.dead.Load() {
		// The process died: a deferred step its unwinding body reaches
		// runs no code, as none would after a real kill.
		return reflect.MakeFunc(reflect.TypeOf(fn), func([]reflect.Value) []reflect.Value { panic(crashSignal{}) }).Interface()
	}
	target, double := fn, false
	if d, ok := r.doubles[s.Name]; ok {
		if reflect.TypeOf(d) != reflect.TypeOf(fn) {
			r.fail("resumetest: run %s, step %s: the double given with Replace is a %T, but the step calls a %T", s.RunID, s.StepKey, d, fn)
			return d // package resume refuses it, failing the attempt
		}
		target, double = d, true
	}
	r.mu.Lock()
	i := len(r.execs)
	r.execs = append(r.execs, Execution{RunID: s.RunID, StepKey: s.StepKey, Name: s.Name, Policy: s.Policy, Attempt: s.Attempt, Double: double})
	r.mu.Unlock()
	v := reflect.ValueOf(target)
	ft := v.Type()
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		var out []reflect.Value
		if ft.IsVariadic() {
			out = v.CallSlice(args)
		} else {
			out = v.Call(args)
		}
		r.returned(i, s, args, out)
		return out
	}).Interface()
}

var errorType = reflect.TypeFor[error]()

// returned records what execution i of step s returned: whether it
// succeeded, and the value a person would resolve the step with.
func (r *recorder) returned(i int, s stephook.Step, args, out []reflect.Value) {
	values := out
	if n := len(out); n > 0 && out[n-1].Type() == errorType {
		if !out[n-1].IsNil() {
			return
		}
		values = out[:n-1]
	}
	raw := journaledValue(stepJSON(s), args, values)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.execs[i].OK = true
	r.results[execKey(s.RunID, s.StepKey)] = raw
}

// stepJSON returns the Go type of what step s journals, as its workflow's
// generated code describes it ("null", "int", "struct{arg3 *Info;
// result1 int; result2 bool}"), or "" when unknown.
func stepJSON(s stephook.Step) string {
	w, err := stephook.Describe(s.Workflow)
	if err != nil {
		return ""
	}
	for _, d := range w.Steps {
		if d.Name == s.Name {
			return d.JSON
		}
	}
	return ""
}

// journaledValue returns what a step journals when it returned values
// (its results but the error) with args (its arguments, the pointees of
// pointer ones written), given the Go type of what it journals: one
// value, or an object of its results (result, or result1, result2, ...)
// and pointees (arg3, ...). It returns nil when that cannot be told.
func journaledValue(layout string, args, values []reflect.Value) json.RawMessage {
	inner, isStruct := strings.CutPrefix(layout, "struct{")
	if !isStruct {
		switch len(values) {
		case 0:
			return json.RawMessage("null")
		case 1:
			if b, err := json.Marshal(values[0].Interface()); err == nil {
				return b
			}
		}
		return nil
	}
	obj := map[string]json.RawMessage{}
	for _, field := range strings.Split(strings.TrimSuffix(inner, "}"), "; ") {
		name, _, _ := strings.Cut(field, " ")
		var v reflect.Value
		switch n, err := strconv.Atoi(strings.TrimLeft(name, "argresult")); {
		case name == "result" && len(values) == 1:
			v = values[0]
		case strings.HasPrefix(name, "result") && err == nil && n >= 1 && n <= len(values):
			v = values[n-1]
		case strings.HasPrefix(name, "arg") && err == nil && n >= 1 && n <= len(args):
			v = args[n-1]
		default:
			return nil
		}
		b, err := json.Marshal(v.Interface())
		if err != nil {
			return nil
		}
		obj[name] = b
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return b
}

// committed records that the transaction of tx step stepKey of run runID
// committed.
func (r *recorder) committed(runID, stepKey string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits[execKey(runID, stepKey)]++
}

func (r *recorder) executions() []Execution {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Execution(nil), r.execs...)
}

// result returns the value the last successful execution of step stepKey
// of run runID returned, as the step journals it (its results and the
// pointees it wrote together), or nil when unknown.
func (r *recorder) result(runID, stepKey string) json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.results[execKey(runID, stepKey)]
}

// checkDoubles fails the test for a double that names no step of the
// workflow wf nor of the workflows it calls, that replaces a call of a
// child workflow, or whose type is not the step's.
func checkDoubles(doubles map[string]any, wf any) error {
	if len(doubles) == 0 {
		return nil
	}
	top, err := stephook.Describe(wf)
	if err != nil {
		return err
	}
	steps := map[string]stephook.StepDesc{}
	var names []string
	seen := map[string]bool{}
	var walk func(w stephook.Workflow)
	walk = func(w stephook.Workflow) {
		if seen[w.Name] {
			return
		}
		seen[w.Name] = true
		for _, s := range w.Steps {
			if _, dup := steps[s.Name]; !dup {
				names = append(names, s.Name)
			}
			steps[s.Name] = s
			if s.Child != "" {
				if child, err := stephook.Describe(s.Child); err == nil {
					walk(child)
				}
			}
		}
	}
	walk(top)
	var problems []string
	for name, d := range doubles {
		s, ok := steps[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("Replace(%q): workflow %s has no step named %s; its steps: %s", name, top.Name, name, strings.Join(names, ", ")))
		case s.Child != "":
			problems = append(problems, fmt.Sprintf("Replace(%q): step %s runs the child workflow %s, which is not replaced; replace the child's steps", name, name, s.Child))
		case reflect.TypeOf(d) == nil || reflect.TypeOf(d).Kind() != reflect.Func:
			problems = append(problems, fmt.Sprintf("Replace(%q): the double is a %T, not a function of the step's type %s", name, d, s.Signature))
		case s.Signature != "" && unqualified(reflect.TypeOf(d).String()) != unqualified(s.Signature):
			problems = append(problems, fmt.Sprintf("Replace(%q): the double is a %s, but step %s calls a %s", name, reflect.TypeOf(d), name, s.Signature))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("resumetest: %s", strings.Join(problems, "\n"))
	}
	return nil
}

var qualifier = regexp.MustCompile(`[A-Za-z0-9_./-]*\.([A-Za-z_])`)

// unqualified writes a type without package qualifiers, parameter names
// or spaces, so that reflect's spelling (main.Input) and the manifest's
// (Input) compare; types that differ only in their packages pass here and
// are told apart when the step executes.
func unqualified(t string) string {
	t = strings.ReplaceAll(t, "...", "\u2026")
	t = qualifier.ReplaceAllString(t, "$1")
	return strings.ReplaceAll(t, " ", "")
}
