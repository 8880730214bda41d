package generator

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/types/typeutil"
)

// findSteps walks the workflow's body in source order and records every
// step call site: a call to a function or method declared //resume:step,
// or a call carrying a trailing //resume:step. It follows the body's calls
// of the package's own functions and methods (see stepSearch.enter) and
// refuses step calls whose execution order the journal cannot reproduce,
// and calls it cannot follow that may reach a step.
func (m *packageModel) findSteps(w *Workflow, ds *diagnostics) {
	s := &stepSearch{m: m, w: w, ds: ds, first: map[string]token.Pos{},
		entered: map[*types.Func]bool{}, callees: map[*ast.Ident]bool{}, helperSteps: map[*types.Func][]*Step{}}
	w.helperCalls = map[token.Pos]*helperCall{}
	m.followed[w.decl] = true
	s.walk(w.decl.Body, "", &frame{body: w.decl.Body, workflow: w.Name})
}

// walk checks the nodes of n, in source order, of the function of fr; why
// is the reason steps may not be called there, or "".
func (s *stepSearch) walk(n ast.Node, why string, fr *frame) {
	m, w, ds := s.m, s.w, s.ds
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			s.walk(n.Call, whyNot(why, "in a go statement: it would run concurrently with the steps after it, in no fixed order; call it directly in the workflow body, or start the goroutine inside a step"), fr)
			return false
		case *ast.DeferStmt:
			// A deferred call runs when the function returns, after the
			// calls deferred later (last in, first out): a fixed order on
			// a fixed path, which a replay takes again, so a deferred step
			// (a saga's compensation) is journaled and replayed in it. Its
			// arguments are evaluated here, as Go does. A wait may not be
			// deferred: see deferredWait.
			s.deferred++
			s.walk(n.Call, why, fr)
			s.deferred--
			return false
		case *ast.FuncLit:
			s.walk(n.Body, whyNot(why, "inside a function literal: a closure may run later, several times or never, so the journal cannot order it; call the step directly in the workflow body, or call the literal where it is written (func() { ... }())"), fr)
			return false
		case *ast.SelectStmt:
			s.walk(n.Body, whyNot(why, "inside select: which case runs is not deterministic, so a resume could take another branch; choose the branch first (for example in a step) and call the step after the select"), fr)
			return false
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				for _, lhs := range []ast.Expr{n.Key, n.Value} {
					if lhs != nil {
						m.checkGlobalWrite(w, lhs, fr.via(), ds)
					}
				}
			}
			if reason := m.rangeReason(fr.body, n); reason != "" {
				for _, x := range []ast.Expr{n.Key, n.Value, n.X} {
					if x != nil {
						s.walk(x, why, fr)
					}
				}
				s.walk(n.Body, whyNot(why, reason), fr)
				return false
			}
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				for _, lhs := range n.Lhs {
					m.checkGlobalWrite(w, lhs, fr.via(), ds)
				}
			}
		case *ast.IncDecStmt:
			m.checkGlobalWrite(w, n.X, fr.via(), ds)
		case *ast.Ident:
			s.checkValueUse(n, fr)
		case *ast.CallExpr:
			return s.call(n, why, fr)
		}
		return true
	})
}

// call checks one call; it reports whether walk should go on into the
// call's children.
func (s *stepSearch) call(n *ast.CallExpr, why string, fr *frame) bool {
	m, w, ds := s.m, s.w, s.ds
	s.callees[calleeIdent(n.Fun)] = true
	if _, marked := m.siteDirectives[n.Lparen]; !marked {
		// A call marked //resume:step is journaled: its outcome is
		// replayed, whatever it is (time.Now, os.Hostname, os.ReadFile).
		m.checkDeterministic(w, n, fr.via(), ds)
	}
	m.checkBuiltinWrite(w, n, fr.via(), ds)
	if lit, ok := ast.Unparen(n.Fun).(*ast.FuncLit); ok {
		// Called where it is written: its body runs here, once, after
		// the arguments, as if inline.
		for _, a := range n.Args {
			s.walk(a, why, fr)
		}
		s.walk(lit.Body, why, fr)
		return false
	}
	if st := m.stepAt(w, n, ds); st != nil {
		prev, dup := s.first[st.Name]
		switch {
		case why != "":
			ds.errorf(n.Pos(), "%s is called %s%s", s.what(st), why, fr.via())
		case s.deferredWait(n, st, nil, fr), s.reservedName(st):
		case dup && !s.sharesName(st, prev):
			s.duplicateName(st, prev)
		default:
			if !dup {
				s.first[st.Name] = n.Pos()
			}
			st.deferred = s.deferred > 0
			st.index = len(w.Steps)
			w.Steps = append(w.Steps, st)
		}
		return true
	}
	if callee := m.graph.Callee(n); callee != nil && !m.workflowFuncs[callee] {
		// The receiver and the arguments run first, in the caller.
		if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
			s.walk(sel.X, why, fr)
		}
		for _, a := range n.Args {
			s.walk(a, why, fr)
		}
		if why == "" && s.deferredWait(n, nil, callee, fr) {
			return false
		}
		s.enter(n, callee, why, fr)
		return false
	}
	s.checkUnfollowed(n, fr)
	return true
}

// whyNot keeps the outermost reason a step may not be called somewhere.
func whyNot(outer, inner string) string {
	if outer != "" {
		return outer
	}
	return inner
}

// rangeReason says why steps may not be called in the body of the range
// statement of the workflow body, or "" when they may.
func (m *packageModel) rangeReason(body *ast.BlockStmt, r *ast.RangeStmt) string {
	t := m.pkg.TypesInfo.TypeOf(r.X)
	if t == nil {
		return ""
	}
	if fn := m.unorderedSeq(r.X); fn != "" {
		return "in a range over " + fn + ": it yields in map order, which is random, so a resume would replay its occurrences against other keys; range over sorted keys instead (slices.Sorted(maps.Keys(m)))"
	}
	switch t.Underlying().(type) {
	case *types.Map:
		return "in a range over a map: map order is random, so a resume would replay its occurrences against other keys; range over sorted keys instead (slices.Sorted(maps.Keys(m)))"
	case *types.Chan:
		if m.ownedChannel(body, r.X) {
			return ""
		}
		return "in a range over a channel the workflow body does not own: received values are not journaled, so a resume would see other values; " +
			"receive them in a step that returns a slice and range over that, or make, fill and close the channel in the body itself"
	}
	return ""
}

// unorderedSeq names the call of x that yields a map's entries in map
// order (maps.Keys, maps.Values, maps.All, or slices.Collect or
// slices.AppendSeq of one), or returns "". Sorting them
// (slices.Sorted(maps.Keys(m))) gives an order a resume sees again.
func (m *packageModel) unorderedSeq(x ast.Expr) string {
	call, ok := ast.Unparen(x).(*ast.CallExpr)
	if !ok {
		return ""
	}
	fn, ok := typeutil.Callee(m.pkg.TypesInfo, call).(*types.Func)
	if !ok || fn.Pkg() == nil {
		return ""
	}
	name := fn.Pkg().Path() + "." + fn.Name()
	switch name {
	case "maps.Keys", "maps.Values", "maps.All":
		return name
	case "slices.Collect", "slices.AppendSeq":
		if len(call.Args) > 0 {
			if inner := m.unorderedSeq(call.Args[len(call.Args)-1]); inner != "" {
				return name + "(" + inner + ")"
			}
		}
	}
	return ""
}

// ownedChannel reports whether x is a channel the workflow body owns: a
// local variable of the body that the body itself only makes, sends to,
// closes, measures and ranges over. Its values then come from the body's
// own deterministic code, in the body's order, and a resume sees the same
// ones. Any other use (passed to a call, captured by a closure or a go
// statement, assigned elsewhere) may hand it to another sender.
func (m *packageModel) ownedChannel(body *ast.BlockStmt, x ast.Expr) bool {
	id, ok := ast.Unparen(x).(*ast.Ident)
	if !ok {
		return false
	}
	info := m.pkg.TypesInfo
	v, ok := info.Uses[id].(*types.Var)
	if !ok || v.Pos() < body.Pos() || v.Pos() >= body.End() {
		return false
	}
	owned := true
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		defer func() { stack = append(stack, n) }()
		use, ok := n.(*ast.Ident)
		if !ok || (info.Uses[use] != v && info.Defs[use] != v) {
			return true
		}
		if !m.ownedUse(stack, use) {
			owned = false
		}
		return true
	})
	return owned
}

// ownedUse reports whether the use of a channel variable, under the nodes of
// stack (outermost first), is one an owning body makes: its definition by
// make, a send, close, len, cap, or the range over it.
func (m *packageModel) ownedUse(stack []ast.Node, use *ast.Ident) bool {
	for _, n := range stack {
		switch n.(type) {
		case *ast.FuncLit, *ast.GoStmt, *ast.DeferStmt:
			return false
		}
	}
	if len(stack) == 0 {
		return false
	}
	switch p := stack[len(stack)-1].(type) {
	case *ast.SendStmt:
		return p.Chan == use
	case *ast.RangeStmt:
		return p.X == use
	case *ast.CallExpr:
		if b, ok := typeutil.Callee(m.pkg.TypesInfo, p).(*types.Builtin); ok {
			switch b.Name() {
			case "close", "len", "cap":
				return true
			}
		}
		return false
	case *ast.AssignStmt:
		// ch := make(chan T, n) or var-less ch = make(...): the definition.
		if p.Tok != token.DEFINE || len(p.Lhs) != len(p.Rhs) {
			return false
		}
		for i, lhs := range p.Lhs {
			if lhs == use {
				call, ok := ast.Unparen(p.Rhs[i]).(*ast.CallExpr)
				if !ok {
					return false
				}
				b, ok := typeutil.Callee(m.pkg.TypesInfo, call).(*types.Builtin)
				return ok && b.Name() == "make"
			}
		}
	}
	return false
}

func (m *packageModel) posString(p token.Pos, ds *diagnostics) string {
	pos := m.pkg.Fset.Position(p)
	return fmt.Sprintf("%s:%d:%d", ds.rel(pos.Filename), pos.Line, pos.Column)
}

// stepAt returns the step of the call, or nil when the call is no step.
// A call marked as a step that cannot be one is reported and yields nil.
func (m *packageModel) stepAt(w *Workflow, call *ast.CallExpr, ds *diagnostics) *Step {
	info := m.pkg.TypesInfo
	site, hasSite := m.siteDirectives[call.Lparen]
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	if kind := waitOf(fn); kind != waitNone {
		return m.waitAt(w, call, fn, kind, site, hasSite, ds)
	}
	if fn != nil && m.isWorkflowFunc(fn.Origin()) {
		return m.childAt(w, call, fn.Origin(), ds)
	}
	var declOpts stepOptions
	isStep := hasSite
	if fn != nil {
		if o, ok := m.stepDecls[fn.Origin()]; ok {
			declOpts, isStep = o, true
		} else if o := m.foreignStep(fn.Origin()); o != nil {
			declOpts, isStep = *o, true
		}
	}
	if !isStep {
		return nil
	}
	if fn == nil {
		ds.errorf(call.Pos(), "%s: a step must be a call of a named function or method, not of a function value, conversion or builtin", site.text)
		return nil
	}
	opts := declOpts
	if hasSite {
		opts = declOpts.override(site.opts)
	}
	sig := fn.Type().(*types.Signature)
	s := &Step{opts: opts, call: call, fn: fn, sig: sig, Policy: string(policyDefault)}
	if opts.hasPolicy {
		s.Policy = string(opts.policy)
	}
	if sig.TypeParams().Len() > 0 {
		// A generic function: the step is its instantiation at this call,
		// whose types enter the signature and the version.
		inst, ok := info.Instances[calleeIdent(call.Fun)]
		if !ok {
			ds.errorf(call.Pos(), "step %s: cannot tell the type arguments of this generic call", fn.Name())
			return nil
		}
		sig = inst.Type.(*types.Signature)
		s.sig, s.typeArgs = sig, inst.TypeArgs
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if selection := info.Selections[sel]; selection != nil {
			if selection.Kind() != types.MethodVal {
				ds.errorf(call.Pos(), "step %s: a method expression cannot be a step; call the method on a value", fn.Name())
				return nil
			}
			s.recv = sel.X
			s.recvType = info.TypeOf(sel.X)
			_, recvIsPtr := sig.Recv().Type().(*types.Pointer)
			_, xIsPtr := s.recvType.Underlying().(*types.Pointer)
			// A pointer method reached without indirection needs the
			// receiver's address, as Go takes it implicitly at the call.
			if recvIsPtr && !xIsPtr && !selection.Indirect() && !types.IsInterface(s.recvType) {
				s.addrRecv = true
				s.recvType = types.NewPointer(s.recvType)
			}
		}
	}
	s.Callee, s.display = calleeNames(fn, w.pkg.Types)
	if s.typeArgs != nil {
		s.Callee += typeArgsString(s.typeArgs, nil)
		s.display += typeArgsString(s.typeArgs, nameQualifier(w.pkg.Types))
	}
	s.Name = defaultStepName(fn)
	if opts.name != "" {
		s.Name = opts.name
	}
	s.takesCtx = sig.Params().Len() > 0 && isContext(sig.Params().At(0).Type())
	bare := bareSignature(sig)
	s.canonSig = types.TypeString(bare, nil)
	s.Signature = types.TypeString(bare, nameQualifier(w.pkg.Types))
	// A step whose types are refused is still a step: where it is called
	// is checked too, so that one pass reports every error of the call.
	// Nothing is generated for a package with errors.
	typesOK := m.checkStepTypes(s, call.Pos(), ds)
	if opts.key != "" && typesOK {
		key, err := m.checkKey(opts.key, call, sig)
		if err != nil {
			ds.errorf(site.pos, "%s: %v", site.text, err)
			return nil
		}
		s.key = key
	}
	return s
}

// stringer is fmt.Stringer, built once.
var stringer = types.NewInterfaceType([]*types.Func{
	types.NewFunc(token.NoPos, nil, "String", types.NewSignatureType(nil, nil, nil, nil,
		types.NewTuple(types.NewParam(token.NoPos, nil, "", types.Typ[types.String])), false)),
}, nil).Complete()

// checkKey type-checks a call site's key=EXPR in the scope of the call and
// decides how the wrapper turns its value into a string. EXPR is evaluated
// as the last argument of the wrapper, after the call's own arguments, as
// Go evaluates arguments left to right.
func (m *packageModel) checkKey(src string, call *ast.CallExpr, sig *types.Signature) (*stepKey, error) {
	if sig.Variadic() {
		return nil, fmt.Errorf("key= on a call of a variadic function is not supported: wrap the call in a non-variadic function and mark that one")
	}
	expr, err := parser.ParseExpr(src)
	if err != nil {
		return nil, fmt.Errorf("key=%s: %v", src, err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	if err := types.CheckExpr(m.pkg.Fset, m.pkg.Types, call.Pos(), expr, info); err != nil {
		return nil, fmt.Errorf("key=%s does not type-check at the call: %s", src, stripPosition(err))
	}
	k := &stepKey{expr: placeAt(expr, call.Rparen), typ: types.Default(info.Types[expr].Type), parsed: expr, uses: info.Uses}
	basic, _ := k.typ.Underlying().(*types.Basic)
	switch {
	case types.Implements(k.typ, stringer):
		k.conv = keyStringer
	case basic != nil && basic.Info()&types.IsString != 0:
		k.conv = keyString
	case basic != nil && basic.Info()&types.IsUnsigned != 0:
		k.conv = keyUnsigned
	case basic != nil && basic.Info()&types.IsInteger != 0:
		k.conv = keySigned
	default:
		return nil, fmt.Errorf("key=%s has type %s: a key must be a string, an integer or a fmt.Stringer", src, typeString(k.typ, m.pkg.Types))
	}
	return k, nil
}

// stripPosition drops the position prefix of a go/types error, which for
// a key expression points into the directive, not into a file.
func stripPosition(err error) string {
	if te, ok := err.(types.Error); ok {
		return te.Msg
	}
	return err.Error()
}

// checkStepTypes refuses a step whose results are not error or (T, error)
// or whose parameter and result types cannot be journaled as JSON, and a
// call-site step whose receiver's state may carry its result. It records
// the pointer parameters, whose pointees the wrapper journals after the
// call and restores on replay, and the step's JSON shape.
func (m *packageModel) checkStepTypes(s *Step, pos token.Pos, ds *diagnostics) bool {
	ok := true
	q := nameQualifier(m.pkg.Types)
	res := s.sig.Results()
	values, hasErr, valid := splitResults(res)
	if !valid {
		ds.errorf(pos, "step %s: %s returns %s; a step's error, if it returns one, must be its last result, and the only error", s.Name, s.display, tupleString(res, q))
		return false
	}
	s.values, s.hasErr = values, hasErr
	if !m.checkReceiver(s, pos, ds) {
		ok = false
	}
	s.Shape = nil
	for n, i := range values {
		t := res.At(i).Type()
		if err := journalable(t, q); err != nil {
			ds.errorf(pos, "step %s: result type %s cannot be journaled as JSON: %v", s.Name, typeString(t, m.pkg.Types), err)
			ok = false
		}
		role := "result"
		if len(values) > 1 {
			role = fmt.Sprintf("result %d", n+1)
		}
		s.Shape = append(s.Shape, jsonShape(role, t, q)...)
	}
	params := s.sig.Params()
	for i := 0; i < params.Len(); i++ {
		if i == 0 && s.takesCtx {
			continue
		}
		t := params.At(i).Type()
		variadic := s.sig.Variadic() && i == params.Len()-1
		if variadic {
			t = t.(*types.Slice).Elem()
		}
		// Parameters are not journaled: the replayed body computes them
		// again. Only what the step may write through a pointer is.
		ptr, isPtr := t.Underlying().(*types.Pointer)
		if !isPtr {
			continue
		}
		jerr := journalable(ptr.Elem(), q)
		if jerr == nil {
			jerr = lossless(ptr.Elem(), q)
		}
		if jerr != nil {
			// JSON cannot carry the pointee: a dependency (a client, a
			// pool, a logger), unless its state may be the step's result.
			why, buffer := mayHoldResult(ptr.Elem())
			switch {
			case buffer:
				ds.errorf(pos, "step %s: parameter %d (%s): %s, which the journal cannot record, so a replay would leave it empty: return the contents as the step's result instead", s.Name, i+1, typeString(t, m.pkg.Types), why)
				ok = false
			case why != "":
				ds.errorf(pos, "step %s: parameter %d (%s): %s, which is journaled to be restored on replay, but %v, or return what the step computes as its result instead", s.Name, i+1, typeString(t, m.pkg.Types), why, jerr)
				ok = false
			}
			continue
		}
		// The step may write its result through the pointer: the wrapper
		// journals the pointee after the call and a replay restores it.
		if variadic {
			ds.errorf(pos, "step %s: variadic parameter ...%s: the step may write through any of the pointers, which the journal does not record; pass a slice of values and return what the step computes", s.Name, typeString(t, m.pkg.Types))
			ok = false
			continue
		}
		s.outArgs = append(s.outArgs, i)
		s.Shape = append(s.Shape, jsonShape(fmt.Sprintf("out arg %d", i+1), ptr.Elem(), q)...)
	}
	s.JSON = journaledType(s, params, q)
	return ok
}

// dependencyTypes are standard-library types with exported fields that a
// step takes as a dependency, not to write its result into: their fields
// configure them.
var dependencyTypes = map[string]bool{
	"net/http.Client": true, "net/http.Transport": true, "crypto/tls.Config": true,
	"text/template.Template": true, "html/template.Template": true,
}

// mayHoldResult says why a value of t, which JSON cannot carry, may hold
// what a step writes into it through a pointer (its exported fields, or,
// with buffer set, a buffer's contents), or returns "" for a dependency: a
// type with no exported field (*sql.DB, *slog.Logger, a service of
// unexported clients) or a known configured client.
func mayHoldResult(t types.Type) (why string, buffer bool) {
	t = types.Unalias(t)
	if n, ok := t.(*types.Named); ok && n.Obj().Pkg() != nil {
		name := n.Obj().Pkg().Path() + "." + n.Obj().Name()
		switch {
		case name == "bytes.Buffer" || name == "strings.Builder":
			return "a " + n.Obj().Pkg().Name() + "." + n.Obj().Name() + " holds what the step writes into it", true
		case dependencyTypes[name]:
			return "", false
		}
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return "the step may write its result through it", false
	}
	var exported []string
	for i := 0; i < st.NumFields(); i++ {
		if f := st.Field(i); f.Exported() {
			exported = append(exported, f.Name())
		}
	}
	if len(exported) == 0 {
		return "", false
	}
	if len(exported) > 3 {
		exported = append(exported[:3], "...")
	}
	return "its exported fields (" + strings.Join(exported, ", ") + ") may hold the step's result", false
}

// journaledType writes the type of the value a step journals as shape
// lines write types: its result's type; with pointer parameters or
// several results, the generated out type's fields ("struct{arg3 *Info;
// result int}", "struct{result1 Order; result2 bool}"); "null" when it
// journals nothing but null.
func journaledType(s *Step, params *types.Tuple, q types.Qualifier) string {
	r := &shapeRenderer{q: q, seen: map[string]bool{}}
	res := s.sig.Results()
	if !s.needsOut() {
		if len(s.values) == 1 {
			return r.typ(res.At(s.values[0]).Type())
		}
		return "null"
	}
	var fields []string
	for _, i := range s.outArgs {
		_, key := outField(i)
		fields = append(fields, key+" "+r.typ(params.At(i).Type()))
	}
	for n, i := range s.values {
		_, key := s.resultField(n)
		fields = append(fields, key+" "+r.typ(res.At(i).Type()))
	}
	sort.Strings(fields)
	return "struct{" + strings.Join(fields, "; ") + "}"
}

// checkReceiver refuses a call-site step (a //resume:step at the call of a
// method the user did not declare a step) on a pointer receiver of a type
// with exported fields: its state may carry the step's result (cmd.Run(),
// then cmd.Stdout), which the journal does not record. A declared step's
// receiver is a dependency, like *sql.DB, and is not journaled.
func (m *packageModel) checkReceiver(s *Step, pos token.Pos, ds *diagnostics) bool {
	recv := s.sig.Recv()
	if recv == nil || s.recv == nil {
		return true
	}
	if _, declared := m.stepDecls[s.fn.Origin()]; declared || m.foreignStep(s.fn.Origin()) != nil {
		return true
	}
	ptr, ok := recv.Type().(*types.Pointer)
	if !ok {
		return true
	}
	if _, isStruct := ptr.Elem().Underlying().(*types.Struct); !isStruct {
		return true
	}
	why, _ := mayHoldResult(ptr.Elem())
	if why == "" {
		return true
	}
	ds.errorf(pos, "step %s: %s has a pointer receiver: %s, which the journal does not record, so a replay would read it unset: "+
		"wrap the call in a function of your own that makes it and returns what you read afterwards, and mark that function //resume:step",
		s.Name, s.display, why)
	return false
}

// calleeIdent is the identifier naming the function in a call's Fun: F,
// pkg.F, F[T] or pkg.F[T1, T2].
func calleeIdent(fun ast.Expr) *ast.Ident {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		return f
	case *ast.SelectorExpr:
		return f.Sel
	case *ast.IndexExpr:
		return calleeIdent(f.X)
	case *ast.IndexListExpr:
		return calleeIdent(f.X)
	}
	return nil
}

// typeArgsString renders type arguments as [T1, T2].
func typeArgsString(l *types.TypeList, q types.Qualifier) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < l.Len(); i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(types.TypeString(l.At(i), q))
	}
	b.WriteByte(']')
	return b.String()
}

// splitResults splits a step's results into the values the journal
// carries (their indices) and a trailing error: a step may return any
// number of values, with or without an error, which must then be last.
// valid is false when an error stands anywhere else.
func splitResults(res *types.Tuple) (values []int, hasErr, valid bool) {
	for i := 0; i < res.Len(); i++ {
		if isError(res.At(i).Type()) {
			if i != res.Len()-1 {
				return nil, false, false
			}
			hasErr = true
			continue
		}
		values = append(values, i)
	}
	return values, hasErr, true
}

// resultsOK reports whether results are error or (T, error).
func resultsOK(res *types.Tuple) bool {
	switch res.Len() {
	case 1:
		return isError(res.At(0).Type())
	case 2:
		return isError(res.At(1).Type())
	}
	return false
}

// calleeNames returns the fully qualified callee and the name shown in the
// manifest comment (qualified by package name outside the workflow's own
// package).
func calleeNames(fn *types.Func, self *types.Package) (qualified, display string) {
	pkgPath, pkgName := "", ""
	if fn.Pkg() != nil {
		pkgPath, pkgName = fn.Pkg().Path(), fn.Pkg().Name()
	}
	local := fn.Name()
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
		t := recv.Type()
		ptr := false
		if p, ok := t.(*types.Pointer); ok {
			t, ptr = p.Elem(), true
		}
		typeName := "?"
		if n, ok := t.(*types.Named); ok {
			typeName = n.Obj().Name()
		}
		if ptr {
			local = "(*" + typeName + ")." + fn.Name()
		} else {
			local = typeName + "." + fn.Name()
		}
	}
	qualified = pkgPath + "." + local
	display = local
	if fn.Pkg() != self && pkgName != "" {
		display = pkgName + "." + local
		if len(local) > 0 && local[0] == '(' {
			display = "(*" + pkgName + "." + local[2:]
		}
	}
	return qualified, display
}

// defaultStepName is the callee's name, Type.Method for methods.
func defaultStepName(fn *types.Func) string {
	recv := fn.Type().(*types.Signature).Recv()
	if recv == nil {
		return fn.Name()
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name() + "." + fn.Name()
	}
	return fn.Name()
}

// bareSignature is sig without receiver and parameter names, so that the
// printed type does not change when a parameter is renamed.
func bareSignature(sig *types.Signature) *types.Signature {
	strip := func(t *types.Tuple) *types.Tuple {
		vars := make([]*types.Var, t.Len())
		for i := range vars {
			vars[i] = types.NewParam(token.NoPos, nil, "", t.At(i).Type())
		}
		return types.NewTuple(vars...)
	}
	return types.NewSignatureType(nil, nil, nil, strip(sig.Params()), strip(sig.Results()), sig.Variadic())
}

// nameQualifier qualifies types by package name, leaving self unqualified.
func nameQualifier(self *types.Package) types.Qualifier {
	return func(p *types.Package) string {
		if p == self {
			return ""
		}
		return p.Name()
	}
}

func typeString(t types.Type, self *types.Package) string {
	return types.TypeString(t, nameQualifier(self))
}

func tupleString(t *types.Tuple, q types.Qualifier) string {
	if t.Len() == 0 {
		return "nothing"
	}
	s := types.TypeString(t, q)
	if t.Len() == 1 {
		return s[1 : len(s)-1]
	}
	return s
}

// isContext reports whether t is context.Context.
func isContext(t types.Type) bool { return isNamed(t, "context", "Context") }

// isError reports whether t is the predeclared error type.
func isError(t types.Type) bool { return types.Identical(t, types.Universe.Lookup("error").Type()) }

func isNamed(t types.Type, pkgPath, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkgPath && n.Obj().Name() == name
}
