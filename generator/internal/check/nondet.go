package check

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/load"
	"github.com/resumegen/resumegen/generator/internal/model"
)

// nondetKind says why a call gives another outcome when a run resumes;
// it picks the message.
type nondetKind int

const (
	nondetNone  nondetKind = iota // deterministic (seeded constructors, a listed pure function)
	nondetValue                   // a value that differs on every call
	nondetWait                    // waits in real time
	nondetEnv                     // reads the process's environment
	nondetFile                    // reads the file system
	nondetNet                     // talks to the network
	nondetProc                    // runs another program
	nondetDB                      // queries a database
	nondetInput                   // reads the process's input
	nondetGuess                   // another module's function without arguments (uuid.New)
)

// nondeterministic lists, by package path, the functions of the standard
// library whose outcome differs from one execution of a workflow body to
// the next: package-level functions by name, "*" for every package-level
// function of the package, methods as "(*T).M" or "T.M". A function of
// the standard library it does not list is deterministic: a function of
// its arguments (strings, strconv, sort, errors, fmt's formatting, ...).
// docs/reference.md lists the same table.
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
	"hash/maphash": {"MakeSeed": nondetValue},
	"os": {
		"Getenv": nondetEnv, "LookupEnv": nondetEnv, "Environ": nondetEnv, "ExpandEnv": nondetEnv,
		"Hostname": nondetEnv, "Getpid": nondetEnv, "Getppid": nondetEnv, "Getuid": nondetEnv, "Getgid": nondetEnv,
		"Getwd": nondetEnv, "Executable": nondetEnv, "UserHomeDir": nondetEnv, "UserCacheDir": nondetEnv, "UserConfigDir": nondetEnv,
		"ReadFile": nondetFile, "Open": nondetFile, "OpenFile": nondetFile, "ReadDir": nondetFile,
		"Stat": nondetFile, "Lstat": nondetFile, "Readlink": nondetFile,
		"(*File).Read": nondetFile, "(*File).ReadAt": nondetFile, "(*File).ReadDir": nondetFile, "(*File).Readdir": nondetFile,
		"(*File).Readdirnames": nondetFile, "(*File).Stat": nondetFile,
	},
	"io/ioutil":     {"ReadFile": nondetFile, "ReadDir": nondetFile, "ReadAll": nondetFile},
	"path/filepath": {"Glob": nondetFile, "Walk": nondetFile, "WalkDir": nondetFile, "EvalSymlinks": nondetFile, "Abs": nondetEnv},
	"runtime":       {"NumGoroutine": nondetValue, "NumCPU": nondetEnv, "GOMAXPROCS": nondetEnv},
	"syscall":       {"*": nondetEnv},
	"fmt":           {"Scan": nondetInput, "Scanln": nondetInput, "Scanf": nondetInput},
	"net": {
		"Dial": nondetNet, "DialTimeout": nondetNet, "DialTCP": nondetNet, "DialUDP": nondetNet, "DialIP": nondetNet, "DialUnix": nondetNet,
		"Listen": nondetNet, "ListenPacket": nondetNet, "LookupHost": nondetNet, "LookupIP": nondetNet, "LookupAddr": nondetNet,
		"LookupCNAME": nondetNet, "LookupMX": nondetNet, "LookupNS": nondetNet, "LookupSRV": nondetNet, "LookupTXT": nondetNet,
		"LookupPort": nondetNet, "Interfaces": nondetEnv, "InterfaceAddrs": nondetEnv,
		"(*Dialer).Dial": nondetNet, "(*Dialer).DialContext": nondetNet,
		"(*Resolver).LookupHost": nondetNet, "(*Resolver).LookupIP": nondetNet, "(*Resolver).LookupIPAddr": nondetNet,
		"(*Resolver).LookupAddr": nondetNet, "(*Resolver).LookupTXT": nondetNet, "(*Resolver).LookupMX": nondetNet,
	},
	"net/http": {
		"Get": nondetNet, "Head": nondetNet, "Post": nondetNet, "PostForm": nondetNet,
		"(*Client).Do": nondetNet, "(*Client).Get": nondetNet, "(*Client).Head": nondetNet,
		"(*Client).Post": nondetNet, "(*Client).PostForm": nondetNet, "(*Transport).RoundTrip": nondetNet,
	},
	"net/smtp": {"SendMail": nondetNet, "Dial": nondetNet},
	"os/exec": {
		"LookPath":   nondetEnv,
		"(*Cmd).Run": nondetProc, "(*Cmd).Output": nondetProc, "(*Cmd).CombinedOutput": nondetProc, "(*Cmd).Start": nondetProc,
	},
	"database/sql": {
		"Open":        nondetDB,
		"(*DB).Query": nondetDB, "(*DB).QueryContext": nondetDB, "(*DB).QueryRow": nondetDB, "(*DB).QueryRowContext": nondetDB,
		"(*DB).Exec": nondetDB, "(*DB).ExecContext": nondetDB, "(*DB).Begin": nondetDB, "(*DB).BeginTx": nondetDB,
		"(*DB).Ping": nondetDB, "(*DB).PingContext": nondetDB, "(*DB).Conn": nondetDB,
		"(*Tx).Query": nondetDB, "(*Tx).QueryContext": nondetDB, "(*Tx).QueryRow": nondetDB, "(*Tx).QueryRowContext": nondetDB,
		"(*Tx).Exec": nondetDB, "(*Tx).ExecContext": nondetDB, "(*Tx).Commit": nondetDB,
		"(*Conn).QueryContext": nondetDB, "(*Conn).QueryRowContext": nondetDB, "(*Conn).ExecContext": nondetDB,
		"(*Stmt).Query": nondetDB, "(*Stmt).QueryContext": nondetDB, "(*Stmt).QueryRow": nondetDB, "(*Stmt).QueryRowContext": nondetDB,
		"(*Stmt).Exec": nondetDB, "(*Stmt).ExecContext": nondetDB,
	},
}

// nondetVars lists the standard library's package-level variables whose
// value, or what a read through it gives, differs from one execution of a
// workflow body to the next: a use of one outside a step is refused, with
// why and the way out. docs/reference.md lists the same table.
var nondetVars = map[string]map[string]struct{ why, fix string }{
	"crypto/rand": {"Reader": {"gives other bytes when the run resumes",
		"read it in a step so what it gives is journaled (pass it to a //resume:step function, or move the read into one)"}},
	"os": {
		"Args": {"reads the process's command line, which may differ when the run resumes in another process or after a deploy",
			"read it where the program starts, and pass what the run needs as the workflow's input"},
		"Stdin": {"reads the process's input, which differs when the run resumes",
			"read it in a step so what it gives is journaled, or before the run starts, as its input"},
	},
}

// otherModules lists, by package path, functions of other modules whose
// outcome differs on every call, as nondeterministic does for the
// standard library. A package-level function of another module it does
// not list is judged by its signature: one that takes no parameter and
// returns a value (uuid.New, ulid.Make) is refused as probably giving
// another value each time, since a function of no input that always gave
// the same would have little reason to be called; any other is taken to
// be a function of its arguments. Methods of other modules' types are not
// judged. docs/reference.md lists the same table and rule.
var otherModules = map[string]map[string]nondetKind{
	"github.com/google/uuid": {"New": nondetValue, "NewString": nondetValue, "NewRandom": nondetValue, "NewUUID": nondetValue,
		"NewV6": nondetValue, "NewV7": nondetValue, "NewRandomFromReader": nondetValue, "Must": nondetNone},
	"github.com/gofrs/uuid":             {"NewV1": nondetValue, "NewV4": nondetValue, "NewV6": nondetValue, "NewV7": nondetValue},
	"github.com/gofrs/uuid/v5":          {"NewV1": nondetValue, "NewV4": nondetValue, "NewV6": nondetValue, "NewV7": nondetValue},
	"github.com/oklog/ulid":             {"Make": nondetValue, "Now": nondetValue, "Timestamp": nondetNone},
	"github.com/oklog/ulid/v2":          {"Make": nondetValue, "Now": nondetValue, "Timestamp": nondetNone},
	"github.com/rs/xid":                 {"New": nondetValue, "NewWithTime": nondetNone},
	"github.com/segmentio/ksuid":        {"New": nondetValue, "NewRandom": nondetValue},
	"github.com/lithammer/shortuuid/v4": {"New": nondetValue},
}

// nondetMessages are the explanations, by kind.
var nondetMessages = map[nondetKind]string{
	nondetValue: "gives another value when the run resumes",
	nondetWait:  "waits in real time again each time the run resumes",
	nondetEnv:   "reads the process's environment, which may differ when the run resumes on another host or after a deploy",
	nondetFile:  "reads files, which may differ when the run resumes on another host or after a deploy",
	nondetNet:   "talks to the network, whose answer may differ when the run resumes (and which it does again)",
	nondetProc:  "runs another program again each time the run resumes, whose outcome may differ",
	nondetDB:    "queries a database again each time the run resumes, whose answer may differ",
	nondetInput: "reads the process's input, which differs when the run resumes",
	nondetGuess: "is a function of another module that takes no arguments and returns a value, so probably gives another value when the run resumes (uuid.New, ulid.Make)",
}

// Nondeterministic refuses, in a workflow body and the helpers it calls
// (of any package of the module), outside steps, a call whose outcome
// differs when the run resumes, as the tables above judge it (clocks and
// timers, randomness, the environment, files, the network, other
// programs, databases, input; another module's function of no
// arguments), and a write to a package-level variable or into what it
// holds (=, op=, ++, --, a range clause's =, delete, clear, copy, a
// pointer method of a variable of the module). A message in a helper
// names the whole path from the workflow. A //resume:allow on the line,
// or on the line of a call on the way to it from the body, makes it a
// reviewed exception. One of the functions the tables refuse, or
// crypto/rand.Reader, used as a value is refused too (now := time.Now;
// now()), unless it is passed straight to a step, which runs it inside
// the journaled call. MapOrder, Concurrency and PackageState refuse the
// other sources of non-determinism.
var Nondeterministic = &Check{
	Name: "nondeterministic",
	Doc:  "no clocks, randomness, environment, I/O or package-level writes outside steps",
	Run: func(p *Pass) {
		walkBodies(p, func(nd *nondet, n ast.Node) {
			switch n := n.(type) {
			case *ast.Ident:
				if !nd.called[n] {
					nd.use(n)
				}
			case *ast.RangeStmt:
				if n.Tok == token.ASSIGN {
					for _, lhs := range []ast.Expr{n.Key, n.Value} {
						if lhs != nil {
							nd.globalWrite(lhs)
						}
					}
				}
			case *ast.AssignStmt:
				if n.Tok != token.DEFINE {
					for _, lhs := range n.Lhs {
						nd.globalWrite(lhs)
					}
				}
			case *ast.IncDecStmt:
				nd.globalWrite(n.X)
			case *ast.CallExpr:
				nd.called[model.CalleeIdent(n.Fun)] = true
				_, marked := nd.in.Pkg.Directives.Sites[n.Lparen]
				if marked || nd.w.CallAt(n.Lparen) != nil {
					for _, a := range n.Args {
						nd.called[model.CalleeIdent(a)] = true
					}
				}
				if !marked {
					// A call marked //resume:step is journaled: its outcome is
					// replayed, whatever it is (time.Now, os.Hostname).
					nd.call(n)
				}
				nd.builtinWrite(n)
			}
		})
	},
}

// walkBodies calls visit for each node of each workflow's bodies (its
// own and the helpers it reaches), with the judging of that node.
func walkBodies(p *Pass, visit func(nd *nondet, n ast.Node)) {
	written := writtenVars(p.Packages)
	p.workflows(func(pkg *model.Package, w *model.Workflow) {
		journaled := journaledSpans(w)
		lvalues, called := map[*ast.Ident]bool{}, map[*ast.Ident]bool{}
		w.Inspect(func(n ast.Node, in *model.Func) {
			visit(&nondet{p: p, pkg: pkg, w: w, in: in, written: written, lvalues: lvalues, called: called, journaled: journaled}, n)
		})
	})
}

// nondet is the judging of one node of a workflow's bodies, in the
// function in.
type nondet struct {
	p       *Pass
	pkg     *model.Package
	w       *model.Workflow
	in      *model.Func
	written map[*types.Var]token.Pos
	// lvalues are the identifiers written, not read, by the statements
	// walked so far (marked by markWritten).
	lvalues map[*ast.Ident]bool
	// called holds the callees of the calls walked so far, and the
	// arguments of journaled calls: a use of a function there is no use
	// as a value. A call is walked before its children.
	called map[*ast.Ident]bool
	// journaled are the workflow's journaled calls, which Placement
	// refuses where they stand.
	journaled spans
}

// report refuses, at pos, what (a call, a statement) that why; fix is the
// way out. In a helper the message names the path from the workflow to
// what: "rand.Intn in util.Pick, called from workflow Onboard along
// Onboard → util.Pick → rand.Intn, gives another value when the run
// resumes: make it a step ...".
func (nd *nondet) report(pos token.Pos, what, why, fix string) {
	where := nd.where(what)
	if why != "" {
		if len(nd.in.Path) > 0 {
			where += ","
		}
		where += " " + why
	}
	nd.p.Nondet(nd.in, nd.w, pos, what, fmt.Sprintf("%s %s: %s", what, where, fix))
}

// where says where the node judged stands: "in a workflow body", or "in
// util.Pick, called from workflow Onboard along Onboard → util.Pick",
// with " → "+callee when callee is not "".
func (nd *nondet) where(callee string) string {
	if len(nd.in.Path) == 0 {
		return "in a workflow body"
	}
	chain := nd.chain()
	if callee != "" {
		chain += " → " + callee
	}
	return fmt.Sprintf("in %s, called from workflow %s along %s", nd.in.Path[len(nd.in.Path)-1], nd.w.Name, chain)
}

// chain is the path from the workflow to in: Onboard → notifyAll → util.Pick.
func (nd *nondet) chain() string {
	return strings.Join(append([]string{nd.w.Name}, nd.in.Path...), " → ")
}

// judge says whether a call of fn, a function not read from source (of
// the standard library or another module), is deterministic, by the
// tables.
func judge(fn *types.Func) nondetKind {
	if fn.Pkg() == nil || load.IsRuntimePath(fn.Pkg().Path()) {
		return nondetNone // the runtime's calls are journaled
	}
	path := fn.Pkg().Path()
	sig := fn.Type().(*types.Signature)
	name := fn.Name()
	if recv := sig.Recv(); recv != nil {
		t := recv.Type()
		ptr := ""
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), "*"
		}
		named, ok := types.Unalias(t).(*types.Named)
		if !ok {
			return nondetNone
		}
		name = "(" + ptr + named.Obj().Name() + ")." + fn.Name()
		if ptr == "" {
			name = named.Obj().Name() + "." + fn.Name()
		}
	}
	if isStd(path) {
		names := nondeterministic[path]
		if kind, ok := names[name]; ok {
			return kind
		}
		if sig.Recv() == nil {
			return names["*"]
		}
		return nondetNone
	}
	if kind, ok := otherModules[path][name]; ok {
		return kind
	}
	if sig.Recv() == nil && sig.Params().Len() == 0 && hasValue(sig.Results()) {
		return nondetGuess
	}
	return nondetNone
}

// isStd reports whether path is a standard library package's: its first
// element has no dot.
func isStd(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

// hasValue reports whether results hold a value that is not an error.
func hasValue(res *types.Tuple) bool {
	for i := 0; i < res.Len(); i++ {
		if !model.IsError(res.At(i).Type()) {
			return true
		}
	}
	return false
}

// call refuses a call whose outcome differs when the run resumes.
func (nd *nondet) call(call *ast.CallExpr) {
	fn, ok := typeutil.Callee(nd.in.Info(), call).(*types.Func)
	if !ok {
		return
	}
	if nd.pkg.Module.Package(fn.Pkg()) != nil {
		return // the module's own code is walked
	}
	kind := judge(fn)
	if kind == nondetNone {
		return
	}
	what := model.QualifiedName(fn, nil)
	if kind == nondetWait {
		nd.report(call.Pos(), what, nondetMessages[kind]+", and holds a worker while it waits", durableWait(fn.Name()))
		return
	}
	fix := "make it a step so its result is journaled: end its line with //resume:step name=NAME, or move it into a //resume:step function"
	if len(nd.in.Path) > 0 {
		fix = "make it a step so its result is journaled: end its line with //resume:step name=NAME, move it into a //resume:step function, or mark the call that leads here from the body //resume:step"
	}
	nd.report(call.Pos(), what, nondetMessages[kind], fix)
}

// use refuses the use of id as a value when it names a function whose
// calls call refuses (now := time.Now; now()), or crypto/rand.Reader
// (io.ReadFull(rand.Reader, b)): the calls through the value, or the reads
// of the reader, give another outcome when the run resumes. The walk
// leaves out callees and the arguments of journaled calls.
func (nd *nondet) use(id *ast.Ident) {
	switch obj := nd.in.Info().Uses[id].(type) {
	case *types.Var:
		if obj.Pkg() == nil || nd.lvalues[id] {
			return // a write (os.Args = nil) is PackageState's, not a read
		}
		v, ok := nondetVars[obj.Pkg().Path()][obj.Name()]
		if !ok {
			return
		}
		what := obj.Pkg().Name() + "." + obj.Name()
		nd.report(id.Pos(), what, v.why, v.fix)
	case *types.Func:
		if nd.pkg.Module.Package(obj.Pkg()) != nil {
			return // the module's own functions are walked where they are called
		}
		kind := judge(obj)
		if kind == nondetNone {
			return
		}
		what := model.QualifiedName(obj, nil)
		why := nondetMessages[kind]
		fix := "call it in a step so its result is journaled (pass it to a //resume:step function, or move the call into one)"
		if kind == nondetWait {
			why, fix = why+", and holds a worker while it waits", durableWait(obj.Name())
		}
		nd.p.Nondet(nd.in, nd.w, id.Pos(), what+" as a value", fmt.Sprintf("%s is used as a value %s: a call through it %s: %s", what, nd.where(""), why, fix))
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
func (nd *nondet) globalWrite(lhs ast.Expr) {
	if id := rootIdent(nd.in.Info(), lhs); id != nil {
		nd.lvalues[id] = true // written here: not judged again as a read
	}
	v := rootVar(nd.in.Info(), lhs)
	if v == nil || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return
	}
	name := v.Name()
	if v.Pkg() != nd.pkg.Load.Types {
		name = v.Pkg().Name() + "." + name
	}
	what := "write to package-level variable " + name
	nd.report(lhs.Pos(), what, "", "the body runs again from the start when the run resumes, so the write happens again while the steps before it do not; keep the state in a local variable, or move the write into a //resume:step function")
}

// builtinWrite applies globalWrite to what delete, clear and copy write
// into: their first argument. (A pointer method of a package-level
// variable, mu.Lock() or hits.Add(1), is PackageState's: it uses state
// the module changes.)
func (nd *nondet) builtinWrite(call *ast.CallExpr) {
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	if !ok || len(call.Args) == 0 {
		return
	}
	if b, ok := nd.in.Info().Uses[id].(*types.Builtin); ok {
		switch b.Name() {
		case "delete", "clear", "copy":
			nd.globalWrite(call.Args[0])
		}
	}
}

// pointerMethodTarget returns the package-level variable whose pointer
// method sel selects (v.M or v.f.M with a pointer receiver on an
// addressable v), or nil.
func pointerMethodTarget(info *types.Info, sel *ast.SelectorExpr) *types.Var {
	s := info.Selections[sel]
	if s == nil || s.Kind() != types.MethodVal {
		return nil
	}
	if _, ptr := s.Obj().Type().(*types.Signature).Recv().Type().(*types.Pointer); !ptr {
		return nil
	}
	if _, xPtr := info.TypeOf(sel.X).Underlying().(*types.Pointer); xPtr {
		return nil // through a pointer: what it points to is not the variable's own state
	}
	v := rootVar(info, sel.X)
	if v == nil || v.Pkg() == nil || v.Parent() != v.Pkg().Scope() {
		return nil
	}
	return v
}

// rootIdent is the identifier rootVar looks up: x, or V of pkg.V.
func rootIdent(info *types.Info, e ast.Expr) *ast.Ident {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			if info.Selections[x] == nil {
				return x.Sel // pkg.V
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

// rootVar is the variable whose state a write through e changes: x for x,
// x.f, x[i], x[i:j], *x and (x), whether x is a struct, an array, a slice,
// a map or a pointer; pkg.V for a qualified identifier. A write through a
// local that aliases a package-level slice, map or pointer is not traced.
func rootVar(info *types.Info, e ast.Expr) *types.Var {
	id := rootIdent(info, e)
	if id == nil {
		return nil
	}
	v, _ := info.Uses[id].(*types.Var)
	return v
}

// spans are the source ranges of a workflow's journaled calls and of the
// helper calls reaching one that the search could not enter: a statement
// holding one is the placement check's to refuse, once.
type spans []ast.Node

func journaledSpans(w *model.Workflow) spans {
	var out spans
	for _, s := range w.Calls {
		out = append(out, s.Call)
	}
	for _, hc := range w.Blocked {
		out = append(out, hc.Call)
	}
	return out
}

// holds reports whether n holds one of the spans.
func (s spans) holds(n ast.Node) bool {
	for _, c := range s {
		if n.Pos() <= c.Pos() && c.End() <= n.End() {
			return true
		}
	}
	return false
}
