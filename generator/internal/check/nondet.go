package check

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/model"
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

// Nondeterministic refuses, in a workflow body and the helpers it calls,
// outside steps, an operation whose outcome differs when the run resumes:
// the clocks and timers of package time, math/rand and math/rand/v2 but
// for seeded constructors, crypto/rand, the environment and file reads of
// os and io/ioutil, and writes to package-level variables or into what
// they hold (=, op=, ++, --, a range clause's =, delete, clear, copy).
// One of those functions, or crypto/rand.Reader, used as a value is
// refused too (now := time.Now; now()), unless it is passed straight to
// a step, which runs it inside the journaled call. A //resume:allow on
// the line makes one a reviewed exception.
var Nondeterministic = &Check{
	Name: "nondeterministic",
	Doc:  "no clocks, randomness, environment, file reads or package-level writes outside steps",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			// called holds the callees of the calls met so far, and the
			// arguments of journaled calls: a use of a function there is
			// no use as a value. A call is met before its children.
			called := map[*ast.Ident]bool{}
			w.Inspect(func(n ast.Node, in *model.Func) {
				switch n := n.(type) {
				case *ast.Ident:
					if !called[n] {
						nondetUse(p, pkg, w, n, in.Via())
					}
				case *ast.RangeStmt:
					if n.Tok == token.ASSIGN {
						for _, lhs := range []ast.Expr{n.Key, n.Value} {
							if lhs != nil {
								globalWrite(p, pkg, w, lhs, in.Via())
							}
						}
					}
				case *ast.AssignStmt:
					if n.Tok != token.DEFINE {
						for _, lhs := range n.Lhs {
							globalWrite(p, pkg, w, lhs, in.Via())
						}
					}
				case *ast.IncDecStmt:
					globalWrite(p, pkg, w, n.X, in.Via())
				case *ast.CallExpr:
					called[model.CalleeIdent(n.Fun)] = true
					if _, marked := pkg.Directives.Sites[n.Lparen]; marked || w.CallAt(n.Lparen) != nil {
						for _, a := range n.Args {
							called[model.CalleeIdent(a)] = true
						}
					}
					if _, marked := pkg.Directives.Sites[n.Lparen]; !marked {
						// A call marked //resume:step is journaled: its outcome is
						// replayed, whatever it is (time.Now, os.Hostname).
						nondetCall(p, pkg, w, n, in.Via())
					}
					builtinWrite(p, pkg, w, n, in.Via())
				}
			})
		})
	},
}

// nondetCall refuses a call whose outcome differs when the run resumes.
// via says, for a call in a helper, how the workflow reaches it, else "".
func nondetCall(p *Pass, pkg *model.Package, w *model.Workflow, call *ast.CallExpr, via string) {
	fn, _ := typeutil.Callee(pkg.Load.TypesInfo, call).(*types.Func)
	kind := nondetKindOf(fn)
	if kind == nondetNone {
		return
	}
	what := fn.Pkg().Name() + "." + fn.Name()
	if kind == nondetWait {
		p.Nondet(pkg, w, call.Pos(), what, fmt.Sprintf("%s in a workflow body%s %s, and holds a worker while it waits: %s", what, via, nondetMessages[kind], durableWait(fn.Name())))
		return
	}
	p.Nondet(pkg, w, call.Pos(), what, fmt.Sprintf("%s in a workflow body%s %s: make it a step so its result is journaled: end its line with //resume:step name=NAME, or move it into a //resume:step function", what, via, nondetMessages[kind]))
}

// nondetKindOf says why a call of fn, a package-level function, gives
// another outcome when the run resumes; nondetNone for any other fn.
func nondetKindOf(fn *types.Func) nondetKind {
	if fn == nil || fn.Pkg() == nil || fn.Type().(*types.Signature).Recv() != nil {
		return nondetNone
	}
	names := nondeterministic[fn.Pkg().Path()]
	if kind, ok := names[fn.Name()]; ok {
		return kind
	}
	return names["*"]
}

// nondetUse refuses the use of id as a value when it names a function
// whose calls nondetCall refuses (now := time.Now; now()), or
// crypto/rand.Reader (io.ReadFull(rand.Reader, b)): the calls through the
// value, or the reads of the reader, give another outcome when the run
// resumes. The caller leaves out callees and the arguments of steps.
func nondetUse(p *Pass, pkg *model.Package, w *model.Workflow, id *ast.Ident, via string) {
	switch obj := pkg.Load.TypesInfo.Uses[id].(type) {
	case *types.Var:
		if obj.Pkg() == nil || obj.Pkg().Path() != "crypto/rand" || obj.Name() != "Reader" {
			return
		}
		what := obj.Pkg().Name() + "." + obj.Name()
		p.Nondet(pkg, w, id.Pos(), what, fmt.Sprintf("%s in a workflow body%s gives other bytes when the run resumes: read it in a step so what it gives is journaled (pass it to a //resume:step function, or move the read into one)", what, via))
	case *types.Func:
		kind := nondetKindOf(obj)
		if kind == nondetNone {
			return
		}
		what := obj.Pkg().Name() + "." + obj.Name()
		if kind == nondetWait {
			p.Nondet(pkg, w, id.Pos(), what+" as a value", fmt.Sprintf("%s is used as a value in a workflow body%s: a call through it %s, and holds a worker while it waits: %s", what, via, nondetMessages[kind], durableWait(obj.Name())))
			return
		}
		p.Nondet(pkg, w, id.Pos(), what+" as a value", fmt.Sprintf("%s is used as a value in a workflow body%s: a call through it %s: call it in a step so its result is journaled (pass it to a //resume:step function, or move the call into one)", what, via, nondetMessages[kind]))
	}
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

// globalWrite refuses a write in a workflow body (=, op=, ++, --, a
// range clause's =, or the builtins delete, clear and copy) into a
// package-level variable or into what one holds: a field, an element, a
// map entry, or what a package-level pointer points to.
func globalWrite(p *Pass, pkg *model.Package, w *model.Workflow, lhs ast.Expr, via string) {
	v := rootVar(pkg.Load.TypesInfo, lhs)
	if v == nil || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return
	}
	name := v.Name()
	if v.Pkg() != pkg.Load.Types {
		name = v.Pkg().Name() + "." + name
	}
	what := "write to package-level variable " + name
	p.Nondet(pkg, w, lhs.Pos(), what, fmt.Sprintf("%s in a workflow body%s: the body runs again from the start when the run resumes, so the write happens again while the steps before it do not; keep the state in a local variable, or move the write into a //resume:step function", what, via))
}

// builtinWrite applies globalWrite to what delete, clear and copy write
// into: their first argument.
func builtinWrite(p *Pass, pkg *model.Package, w *model.Workflow, call *ast.CallExpr, via string) {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || len(call.Args) == 0 {
		return
	}
	if b, ok := pkg.Load.TypesInfo.Uses[id].(*types.Builtin); ok {
		switch b.Name() {
		case "delete", "clear", "copy":
			globalWrite(p, pkg, w, call.Args[0], via)
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
