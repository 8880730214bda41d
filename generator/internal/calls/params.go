package calls

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// Use is what a function may do, through one of its parameters, to what
// its caller handed it: the caller's slice's elements, map's entries,
// channel, function or writer. A step that does any of it changes the
// body's state in a way a replay, which does not execute the step, would
// not: the model journals and writes back what it can, and the checks
// refuse the rest.
type Use struct {
	// Writes: it writes into what the parameter refers to (an element of
	// a slice, an entry of a map, what a reference field of a struct holds).
	Writes bool
	// Appends: it appends to a slice parameter, which may write into the
	// caller's array past the slice's length, where no journal restores it.
	Appends bool
	// Chan: it sends to, receives from or closes a channel parameter.
	Chan bool
	// Calls: it calls a function parameter, which may change what the
	// caller's closure holds.
	Calls bool
	// Writer: it writes to an io.Writer parameter (or hands it on).
	Writer bool
	// Why says, for a message, the first such use: "s[i] = ...",
	// "passes it to sort.Strings"; At is where. AppendsWhy is Why for the
	// first use that appends.
	Why        string
	At         token.Pos
	AppendsWhy string
}

// Any reports whether the function may do anything of the above.
func (u Use) Any() bool { return u.Writes || u.Appends || u.Chan || u.Calls || u.Writer }

// Add adds what o may do to u.
func (u *Use) Add(o Use) { u.add(o) }

func (u *Use) add(o Use) {
	if !u.Any() && o.Any() {
		u.Why, u.At = o.Why, o.At
	}
	if !u.Appends && o.Appends {
		u.AppendsWhy = o.AppendsWhy
		if u.AppendsWhy == "" {
			u.AppendsWhy = o.Why
		}
	}
	u.Writes = u.Writes || o.Writes
	u.Appends = u.Appends || o.Appends
	u.Chan = u.Chan || o.Chan
	u.Calls = u.Calls || o.Calls
	u.Writer = u.Writer || o.Writer
}

// Unknown is the Use of a parameter of a function whose body the
// generator does not read: anything.
var Unknown = Use{Writes: true, Appends: true, Chan: true, Calls: true, Writer: true, Why: "its body is not read"}

// readOnly lists functions of the standard library, by package path and
// name, that do nothing of Use to their parameters but the ones given
// (-1: none of them): fmt's formatting, strings, strconv, encoding/json's
// Marshal, reading functions of slices, maps, sort, bytes and errors.
var readOnly = map[string]map[string]bool{
	"fmt":           {"Sprint": true, "Sprintf": true, "Sprintln": true, "Errorf": true, "Print": true, "Printf": true, "Println": true, "Append": true, "Appendf": true, "Appendln": true},
	"strconv":       {"*": true},
	"strings":       {"*": true},
	"errors":        {"*": true},
	"math":          {"*": true},
	"unicode":       {"*": true},
	"unicode/utf8":  {"*": true},
	"encoding/json": {"Marshal": true, "MarshalIndent": true, "Valid": true},
	"bytes": {"Equal": true, "Compare": true, "Contains": true, "ContainsAny": true, "ContainsRune": true, "Count": true,
		"HasPrefix": true, "HasSuffix": true, "Index": true, "IndexByte": true, "IndexAny": true, "LastIndex": true,
		"Clone": true, "ToUpper": true, "ToLower": true, "TrimSpace": true, "Split": true, "Fields": true, "Join": true},
	"slices": {"Contains": true, "ContainsFunc": true, "Index": true, "IndexFunc": true, "Equal": true, "EqualFunc": true,
		"Compare": true, "CompareFunc": true, "Max": true, "MaxFunc": true, "Min": true, "MinFunc": true, "Clone": true,
		"BinarySearch": true, "BinarySearchFunc": true, "IsSorted": true, "IsSortedFunc": true, "Concat": true, "Values": true, "All": true},
	"maps": {"Clone": true, "Keys": true, "Values": true, "All": true, "Equal": true, "EqualFunc": true},
	"sort": {"Search": true, "SearchInts": true, "SearchStrings": true, "SearchFloat64s": true, "IsSorted": true,
		"IntsAreSorted": true, "StringsAreSorted": true, "SliceIsSorted": true},
}

// sorters lists functions of the standard library that write the
// elements of the slice they are given first (reordering them), and do
// nothing else of Use to their parameters.
var sorters = map[string]bool{
	"sort.Slice": true, "sort.SliceStable": true, "sort.Strings": true, "sort.Ints": true, "sort.Float64s": true,
	"slices.Sort": true, "slices.SortFunc": true, "slices.SortStableFunc": true, "slices.Reverse": true,
}

// StdUse is what fn, of the standard library, may do through its i-th
// parameter, as the tables of this file say, and whether they say it.
func StdUse(fn *types.Func, i int) (Use, bool) {
	if fn.Pkg() == nil || strings.Contains(strings.SplitN(fn.Pkg().Path(), "/", 2)[0], ".") {
		return Use{}, false
	}
	return stdUse(fn, i)
}

func stdUse(fn *types.Func, i int) (Use, bool) {
	if fn.Pkg() == nil || fn.Type().(*types.Signature).Recv() != nil {
		return Use{}, false
	}
	if sorters[fn.Pkg().Path()+"."+fn.Name()] {
		if i == 0 {
			return Use{Writes: true, Why: "sorts it"}, true
		}
		return Use{}, true
	}
	names := readOnly[fn.Pkg().Path()]
	return Use{}, names[fn.Name()] || names["*"]
}

// params computes Uses.
type params struct {
	g    *Graph
	memo map[paramKey]Use
	busy map[paramKey]bool
}

type paramKey struct {
	fn *types.Func
	i  int // -1 for the receiver
}

// ParamUse says what fn, a function or method read from source, may do
// through its i-th parameter (-1: its receiver) to what its caller handed
// it; the Use of a function whose body is not read is Unknown. Calls of
// functions of the module are followed; a recursive call adds nothing.
func (a *Analysis) ParamUse(fn *types.Func, i int) Use {
	if a.params == nil {
		a.params = &params{g: a.Steps, memo: map[paramKey]Use{}, busy: map[paramKey]bool{}}
	}
	return a.params.use(fn.Origin(), i)
}

func (ps *params) use(fn *types.Func, i int) Use {
	k := paramKey{fn, i}
	if u, ok := ps.memo[k]; ok {
		return u
	}
	decl := ps.g.Decl(fn)
	if decl == nil {
		if u, ok := StdUse(fn, i); ok {
			return u
		}
		if ps.busy[k] {
			return Use{}
		}
		ps.busy[k] = true
		defer delete(ps.busy, k)
		u, found := ps.implementations(fn, i)
		if !found {
			return Unknown
		}
		ps.memo[k] = u
		return u
	}
	if ps.busy[k] {
		return Use{}
	}
	ps.busy[k] = true
	defer delete(ps.busy, k)
	info := ps.g.Info(decl.Pos())
	v := paramVar(info, decl, i)
	var u Use
	if v != nil {
		u = ps.bodyUse(info, decl.Body, v)
	}
	ps.memo[k] = u
	return u
}

// implementations is the Use of an interface method: what the methods of
// the graph implementing it may do (false when none does, or fn is no
// interface method).
func (ps *params) implementations(fn *types.Func, i int) (Use, bool) {
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil || !types.IsInterface(recv.Type()) {
		return Use{}, false
	}
	iface := recv.Type().Underlying().(*types.Interface)
	var u Use
	found := false
	for _, impl := range ps.g.Methods(fn.Name()) {
		t := impl.Type().(*types.Signature).Recv().Type()
		if !types.Implements(t, iface) && !types.Implements(types.NewPointer(t), iface) {
			continue
		}
		found = true
		one := ps.use(impl, i)
		if one.Any() && !u.Any() {
			one.Why += " (in " + calleeName(impl) + ")"
		}
		u.add(one)
	}
	return u, found
}

// Implemented reports whether fn, an interface method, has
// implementations among the graph's methods, whose Use ParamUse unites.
func (a *Analysis) Implemented(fn *types.Func) bool {
	if a.params == nil {
		a.params = &params{g: a.Steps, memo: map[paramKey]Use{}, busy: map[paramKey]bool{}}
	}
	_, found := a.params.implementations(fn, 0)
	return found
}

// paramVar is the i-th parameter of decl (-1: its receiver), or nil when
// it is unnamed or blank.
func paramVar(info *types.Info, decl *ast.FuncDecl, i int) *types.Var {
	var list *ast.FieldList
	if i < 0 {
		list, i = decl.Recv, 0
	} else {
		list = decl.Type.Params
	}
	if list == nil {
		return nil
	}
	n := 0
	for _, f := range list.List {
		if len(f.Names) == 0 {
			if n == i {
				return nil
			}
			n++
			continue
		}
		for _, name := range f.Names {
			if n == i {
				if name.Name == "_" {
					return nil
				}
				v, _ := info.Defs[name].(*types.Var)
				return v
			}
			n++
		}
	}
	return nil
}

// bodyUse is what body does through v and the local variables aliasing
// it (assigned from v, a slice of it, a field of it).
func (ps *params) bodyUse(info *types.Info, body *ast.BlockStmt, v *types.Var) Use {
	aliases := map[*types.Var]bool{v: true}
	// Aliases first: x := v, x := v[i:j], x := v.F, until nothing changes.
	for changed := true; changed; {
		changed = false
		ast.Inspect(body, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || len(as.Lhs) != len(as.Rhs) {
				return true
			}
			for j, rhs := range as.Rhs {
				if root := refRoot(info, rhs); root != nil && aliases[root] {
					if id, ok := as.Lhs[j].(*ast.Ident); ok {
						if x, ok := info.ObjectOf(id).(*types.Var); ok && !aliases[x] && sharesState(x.Type()) {
							aliases[x], changed = true, true
						}
					}
				}
			}
			return true
		})
	}
	var u Use
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		if x, ok := info.Uses[id].(*types.Var); ok && aliases[x] {
			u.add(ps.useAt(info, stack, id))
		}
		return true
	})
	return u
}

// sharesState reports whether a value of t shares state with what it was
// copied from: a slice, map, channel, function, interface or pointer, or a
// struct or array holding one where code outside the struct's package can
// reach it (an unexported field of another package's struct, such as
// time.Time's location, is that package's business).
func sharesState(t types.Type) bool { return SharesState(t, nil) }

// SharesState is sharesState for code of package from (nil: any package).
func SharesState(t types.Type, from *types.Package) bool {
	return sharesStateSeen(t, from, map[types.Type]bool{})
}

func sharesStateSeen(t types.Type, from *types.Package, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Interface, *types.Pointer:
		return true
	case *types.Struct:
		for i := 0; i < u.NumFields(); i++ {
			f := u.Field(i)
			if !f.Exported() && f.Pkg() != from && from != nil {
				continue
			}
			if !f.Exported() && from == nil && f.Pkg() != nil && isStdPath(f.Pkg().Path()) {
				continue
			}
			if sharesStateSeen(f.Type(), from, seen) {
				return true
			}
		}
	case *types.Array:
		return sharesStateSeen(u.Elem(), from, seen)
	}
	return false
}

// isStdPath reports whether path is a standard library package's.
func isStdPath(path string) bool { return !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") }

// refRoot is the variable e reads state through: v for v, v[i:j], v.F,
// (v); nil otherwise.
func refRoot(info *types.Info, e ast.Expr) *types.Var {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			v, _ := info.Uses[x].(*types.Var)
			return v
		case *ast.SliceExpr:
			e = x.X
		case *ast.SelectorExpr:
			if s := info.Selections[x]; s == nil || s.Kind() != types.FieldVal {
				return nil
			}
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// useAt is what the use id of an alias of the parameter, under the nodes
// of stack (outermost first, id last), may do.
func (ps *params) useAt(info *types.Info, stack []ast.Node, id *ast.Ident) Use {
	// Climb through what still denotes (part of) the parameter's state:
	// selectors, indexes, slices, parens, stars, noting whether a
	// reference is crossed (an index of a slice or map, a dereference).
	var e ast.Expr = id
	crossed := false
	i := len(stack) - 2
	for ; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.ParenExpr:
			e = p
			continue
		case *ast.SelectorExpr:
			if p.X != e {
				break
			}
			if s := info.Selections[p]; s != nil && s.Kind() == types.FieldVal {
				if _, ptr := info.TypeOf(p.X).Underlying().(*types.Pointer); ptr {
					crossed = true
				}
				e = p
				continue
			}
		case *ast.IndexExpr:
			if p.X != e {
				break
			}
			switch info.TypeOf(p.X).Underlying().(type) {
			case *types.Slice, *types.Map, *types.Pointer:
				crossed = true
			}
			e = p
			continue
		case *ast.SliceExpr:
			if p.X == e {
				e = p
				continue
			}
		case *ast.StarExpr:
			if p.X == e {
				crossed = true
				e = p
				continue
			}
		}
		break
	}
	if i < 0 {
		return Use{}
	}
	pos := id.Pos()
	what := types.ExprString(e)
	if sel, ok := stack[i].(*ast.SelectorExpr); ok && sel.X == e {
		return ps.methodUse(info, sel, what, pos)
	}
	switch p := stack[i].(type) {
	case *ast.AssignStmt:
		for _, lhs := range p.Lhs {
			if lhs == e {
				if crossed && p.Tok != token.DEFINE {
					return Use{Writes: true, Why: what + " " + p.Tok.String() + " ...", At: pos}
				}
				return Use{}
			}
		}
	case *ast.IncDecStmt:
		if crossed {
			return Use{Writes: true, Why: what + p.Tok.String(), At: pos}
		}
	case *ast.RangeStmt:
		if (p.Key == e || p.Value == e) && p.Tok == token.ASSIGN && crossed {
			return Use{Writes: true, Why: "for ... = range assigns " + what, At: pos}
		}
		if p.X == e {
			if _, ch := info.TypeOf(e).Underlying().(*types.Chan); ch {
				return Use{Chan: true, Why: "ranges over the channel " + what, At: pos}
			}
		}
	case *ast.SendStmt:
		if p.Chan == e {
			return Use{Chan: true, Why: "sends to " + what, At: pos}
		}
	case *ast.UnaryExpr:
		switch p.Op {
		case token.ARROW:
			return Use{Chan: true, Why: "receives from " + what, At: pos}
		case token.AND:
			return Use{Writes: true, Why: "takes the address of " + what, At: pos}
		}
	case *ast.CompositeLit, *ast.KeyValueExpr:
		switch info.TypeOf(e).Underlying().(type) {
		case *types.Slice, *types.Map, *types.Chan, *types.Signature, *types.Pointer:
			return Use{Writes: true, Why: "stores " + what + " in a composite literal", At: pos}
		}
	case *ast.CallExpr:
		return ps.callUse(info, p, e, what, pos)
	}
	return Use{}
}

// writeMethods are the methods of an io.Writer-like interface that write.
var writeMethods = map[string]bool{"Write": true, "WriteString": true, "WriteByte": true, "WriteRune": true}

// methodUse is what the method sel selects may do to its receiver, what:
// an interface's Write methods write, other interface methods are the
// dependency's own business; a concrete method's is its receiver's Use.
func (ps *params) methodUse(info *types.Info, sel *ast.SelectorExpr, what string, pos token.Pos) Use {
	s := info.Selections[sel]
	if s == nil || s.Kind() != types.MethodVal {
		return Use{}
	}
	fn := s.Obj().(*types.Func)
	if types.IsInterface(s.Recv()) {
		if writeMethods[fn.Name()] {
			return Use{Writer: true, Why: "calls " + what + "." + fn.Name(), At: pos}
		}
		return Use{}
	}
	u := ps.use(fn.Origin(), -1)
	if u.Any() {
		u.Why, u.At = "calls its method "+calleeName(fn), pos
	}
	return u
}

// callUse is what the call may do to e, one of its operands.
func (ps *params) callUse(info *types.Info, call *ast.CallExpr, e ast.Expr, what string, pos token.Pos) Use {
	if call.Fun == e {
		return Use{Calls: true, Why: "calls " + what, At: pos}
	}
	if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
		return Use{} // a conversion
	}
	arg := -1
	for j, a := range call.Args {
		if ast.Unparen(a) == e {
			arg = j
		}
	}
	if b, ok := typeutil.Callee(info, call).(*types.Builtin); ok {
		switch b.Name() {
		case "copy", "clear", "delete":
			if arg == 0 {
				return Use{Writes: true, Why: b.Name() + "(" + what + ", ...)", At: pos}
			}
		case "append":
			if arg == 0 {
				return Use{Appends: true, Why: "append(" + what + ", ...)", AppendsWhy: "append(" + what + ", ...)", At: pos}
			}
			if sharesState(info.TypeOf(e)) {
				return Use{Writes: true, Why: "appends " + what + " to a slice", At: pos}
			}
		case "close":
			return Use{Chan: true, Why: "close(" + what + ")", At: pos}
		}
		return Use{}
	}
	if arg < 0 {
		return Use{}
	}
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	if fn == nil {
		u := Unknown
		u.Why, u.At = "passes "+what+" to "+types.ExprString(call.Fun)+", a function value", pos
		return u
	}
	sig := fn.Type().(*types.Signature)
	j := arg
	if sig.Variadic() && j >= sig.Params().Len()-1 {
		j = sig.Params().Len() - 1
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok && sig.Recv() != nil {
		if s := info.Selections[sel]; s != nil && s.Kind() == types.MethodExpr {
			j-- // T.M(x, ...): x is the receiver
		}
	}
	u := ps.use(fn.Origin(), j)
	if u.Any() {
		u.Why, u.At = "passes "+what+" to "+calleeName(fn), pos
		if u.Appends {
			u.AppendsWhy = u.Why
		}
	}
	return u
}

// calleeName names fn for a message: pkg.F, or pkg.T.M.
func calleeName(fn *types.Func) string {
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
	if fn.Pkg() != nil {
		name = fn.Pkg().Name() + "." + name
	}
	return name
}
