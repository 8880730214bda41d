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
// they hold (=, op=, ++, --, a range clause's =, delete, clear, copy). A
// //resume:allow on the line makes one a reviewed exception.
var Nondeterministic = &Check{
	Name: "nondeterministic",
	Doc:  "no clocks, randomness, environment, file reads or package-level writes outside steps",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			w.Inspect(func(n ast.Node, in *model.Func) {
				switch n := n.(type) {
				case *ast.RangeStmt:
					if n.Tok == token.ASSIGN {
						for _, lhs := range []ast.Expr{n.Key, n.Value} {
							if lhs != nil {
								globalWrite(p, pkg, w, lhs, in)
							}
						}
					}
				case *ast.AssignStmt:
					if n.Tok != token.DEFINE {
						for _, lhs := range n.Lhs {
							globalWrite(p, pkg, w, lhs, in)
						}
					}
				case *ast.IncDecStmt:
					globalWrite(p, pkg, w, n.X, in)
				case *ast.CallExpr:
					if _, marked := in.Pkg.Directives.Sites[n.Lparen]; !marked {
						// A call marked //resume:step is journaled: its outcome is
						// replayed, whatever it is (time.Now, os.Hostname).
						nondetCall(p, pkg, w, n, in)
					}
					builtinWrite(p, pkg, w, n, in)
				}
			})
		})
	},
}

// nondetCall refuses a call whose outcome differs when the run resumes.
// via says, for a call in a helper, how the workflow reaches it, else "".
func nondetCall(p *Pass, pkg *model.Package, w *model.Workflow, call *ast.CallExpr, in *model.Func) {
	via := in.Via()
	fn, ok := typeutil.Callee(in.Info(), call).(*types.Func)
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
		p.Nondet(in, w, call.Pos(), what, fmt.Sprintf("%s in a workflow body%s %s, and holds a worker while it waits: %s", what, via, nondetMessages[kind], durableWait(fn.Name())))
		return
	}
	p.Nondet(in, w, call.Pos(), what, fmt.Sprintf("%s in a workflow body%s %s: make it a step so its result is journaled: end its line with //resume:step name=NAME, or move it into a //resume:step function", what, via, nondetMessages[kind]))
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
func globalWrite(p *Pass, pkg *model.Package, w *model.Workflow, lhs ast.Expr, in *model.Func) {
	via := in.Via()
	v := rootVar(in.Info(), lhs)
	if v == nil || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return
	}
	name := v.Name()
	if v.Pkg() != pkg.Load.Types {
		name = v.Pkg().Name() + "." + name
	}
	what := "write to package-level variable " + name
	p.Nondet(in, w, lhs.Pos(), what, fmt.Sprintf("%s in a workflow body%s: the body runs again from the start when the run resumes, so the write happens again while the steps before it do not; keep the state in a local variable, or move the write into a //resume:step function", what, via))
}

// builtinWrite applies globalWrite to what delete, clear and copy write
// into: their first argument.
func builtinWrite(p *Pass, pkg *model.Package, w *model.Workflow, call *ast.CallExpr, in *model.Func) {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || len(call.Args) == 0 {
		return
	}
	if b, ok := in.Info().Uses[id].(*types.Builtin); ok {
		switch b.Name() {
		case "delete", "clear", "copy":
			globalWrite(p, pkg, w, call.Args[0], in)
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
