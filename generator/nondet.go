package generator

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// nondetKind says why a call gives another outcome when a run resumes;
// it picks the message.
type nondetKind int

const (
	nondetNone  nondetKind = iota // deterministic after all (seeded constructors)
	nondetValue                   // a value that differs on every call
	nondetWait                    // waits in real time
	nondetEnv                     // reads the process's environment
	nondetFile                    // reads the file system
)

// nondeterministic lists, by package path, the package-level functions
// whose outcome differs from one execution of a workflow body to the next;
// "*" is every package-level function of the package.
var nondeterministic = map[string]map[string]nondetKind{
	"time": {
		"Now": nondetValue, "Since": nondetValue, "Until": nondetValue,
		"Sleep": nondetWait, "After": nondetWait, "Tick": nondetWait,
		"NewTimer": nondetWait, "NewTicker": nondetWait, "AfterFunc": nondetWait,
	},
	// Constructors of generators are deterministic: the seed is the
	// user's, and the generator's methods are not flagged.
	"math/rand":    {"*": nondetValue, "New": nondetNone, "NewSource": nondetNone, "NewZipf": nondetNone},
	"math/rand/v2": {"*": nondetValue, "New": nondetNone, "NewPCG": nondetNone, "NewChaCha8": nondetNone, "NewZipf": nondetNone},
	"crypto/rand":  {"*": nondetValue},
	"os": {
		"Getenv": nondetEnv, "LookupEnv": nondetEnv, "Environ": nondetEnv,
		"Hostname": nondetEnv, "Getpid": nondetEnv,
		"ReadFile": nondetFile, "Open": nondetFile, "OpenFile": nondetFile, "ReadDir": nondetFile,
	},
	"io/ioutil": {"ReadFile": nondetFile, "ReadDir": nondetFile, "ReadAll": nondetFile},
}

// nondetMessages are the explanations, by kind; each ends with the way
// out.
var nondetMessages = map[nondetKind]string{
	nondetValue: "gives another value when the run resumes",
	nondetWait:  "waits in real time again each time the run resumes",
	nondetEnv:   "reads the process's environment, which may differ when the run resumes on another host or after a deploy",
	nondetFile:  "reads files, which may differ when the run resumes on another host or after a deploy",
}

// checkDeterministic refuses a call in a workflow body, outside a step,
// whose outcome differs when the run resumes. via says, for a call in a
// helper, how the workflow reaches it (see helperPath.via), else "".
func (m *packageModel) checkDeterministic(w *Workflow, call *ast.CallExpr, via string, ds *diagnostics) {
	fn, ok := typeutil.Callee(m.pkg.TypesInfo, call).(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Type().(*types.Signature).Recv() != nil {
		return
	}
	names := nondeterministic[fn.Pkg().Path()]
	kind, ok := names[fn.Name()]
	if !ok {
		kind = names["*"]
	}
	if kind == nondetNone {
		return
	}
	what := fn.Pkg().Name() + "." + fn.Name()
	if kind == nondetWait {
		m.nondet(w, call.Pos(), what, fmt.Sprintf("%s in a workflow body%s %s, and holds a worker while it waits: %s", what, via, nondetMessages[kind], durableWait(fn.Name())), ds)
		return
	}
	m.nondet(w, call.Pos(), what, fmt.Sprintf("%s in a workflow body%s %s: make it a step so its result is journaled: end its line with //resume:step name=NAME, or move it into a //resume:step function", what, via, nondetMessages[kind]), ds)
}

// durableWait is the way out of a real-time wait of package time (name)
// in a workflow body: the runtime's durable waits.
func durableWait(name string) string {
	const sleep = "resume.Sleep(ctx, d), which journals the wake-up time once and suspends the run until then"
	switch name {
	case "Sleep":
		return "use " + sleep
	case "Tick", "NewTicker":
		return "to act every d, loop over a call of " + sleep
	case "AfterFunc":
		return "call " + sleep + ", then the function"
	}
	return "to wait for d use " + sleep + "; to wait for an event with a timeout, resume.Await[T](ctx, NAME, timeout)"
}

// checkGlobalWrite refuses a write in a workflow body (=, op=, ++, --, a
// range clause's =, or the builtins delete, clear and copy) into a
// package-level variable or into what one holds: a field, an element, a
// map entry, or what a package-level pointer points to.
func (m *packageModel) checkGlobalWrite(w *Workflow, lhs ast.Expr, via string, ds *diagnostics) {
	v := rootVar(m.pkg.TypesInfo, lhs)
	if v == nil || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return
	}
	name := v.Name()
	if v.Pkg() != m.pkg.Types {
		name = v.Pkg().Name() + "." + name
	}
	what := "write to package-level variable " + name
	m.nondet(w, lhs.Pos(), what, fmt.Sprintf("%s in a workflow body%s: the body runs again from the start when the run resumes, so the write happens again while the steps before it do not; keep the state in a local variable, or move the write into a //resume:step function", what, via), ds)
}

// checkBuiltinWrite applies checkGlobalWrite to what delete, clear and copy
// write into: their first argument.
func (m *packageModel) checkBuiltinWrite(w *Workflow, call *ast.CallExpr, via string, ds *diagnostics) {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || len(call.Args) == 0 {
		return
	}
	if b, ok := m.pkg.TypesInfo.Uses[id].(*types.Builtin); ok {
		switch b.Name() {
		case "delete", "clear", "copy":
			m.checkGlobalWrite(w, call.Args[0], via, ds)
		}
	}
}

// rootVar is the variable whose state a write through e changes: x for x,
// x.f, x[i], x[i:j], *x and (x), whether x is a struct, an array, a slice,
// a map or a pointer; pkg.V for a qualified identifier. A write through a
// local that aliases a package-level slice, map or pointer is not traced.
func rootVar(info *types.Info, e ast.Expr) *types.Var {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			v, _ := info.Uses[x].(*types.Var)
			return v
		case *ast.SelectorExpr:
			if info.Selections[x] == nil {
				v, _ := info.Uses[x.Sel].(*types.Var) // pkg.V
				return v
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// allowance is a //resume:allow nondeterministic reason="..." directive at
// the end of a line of a workflow body.
type allowance struct {
	d      directive
	reason string
	used   bool
}

// Exception is a reviewed exception to the non-determinism checks, written
// as //resume:allow at the end of the offending line.
type Exception struct {
	// Check is the check it silences: "nondeterministic".
	Check string `json:"check"`
	// What names the call or write, without its position: "time.Now",
	// "write to package-level variable hits".
	What string `json:"what"`
	// Reason is the reviewer's reason, as written.
	Reason string `json:"reason"`
}

// nondet reports a non-deterministic operation at pos, unless a
// //resume:allow on its line records it as a reviewed exception.
func (m *packageModel) nondet(w *Workflow, pos token.Pos, what, msg string, ds *diagnostics) {
	p := m.pkg.Fset.Position(pos)
	if a := m.allows[lineKey{p.Filename, p.Line}]; a != nil {
		a.used = true
		w.Exceptions = append(w.Exceptions, Exception{Check: "nondeterministic", What: what, Reason: a.reason})
		return
	}
	ds.errorf(pos, "%s", msg)
}

// unusedAllows reports //resume:allow directives that silenced nothing.
func (m *packageModel) unusedAllows(ds *diagnostics) {
	for _, a := range m.allows {
		if !a.used {
			ds.errorf(a.d.pos, "%s: nothing on this line needs it: remove the directive", a.d.text)
		}
	}
}

// parseAllow parses the rest of //resume:allow: the check's name and a
// mandatory quoted reason.
func parseAllow(rest string) (string, error) {
	check, rest, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if check != "nondeterministic" {
		return "", fmt.Errorf("want //resume:allow nondeterministic reason=\"...\" (the only check that can be allowed is nondeterministic)")
	}
	val, ok := strings.CutPrefix(strings.TrimSpace(rest), "reason=")
	if !ok {
		return "", fmt.Errorf("missing reason=\"...\": a reviewed exception says why it is safe")
	}
	reason, err := strconv.Unquote(val)
	if err != nil || strings.TrimSpace(reason) == "" {
		return "", fmt.Errorf("bad reason=%s: want a non-empty Go string literal, e.g. reason=\"only logged\"", val)
	}
	return reason, nil
}
