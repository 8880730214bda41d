package model

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/types/typeutil"

	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/jsontype"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// PolicyChild is the policy a child call's step shows in the manifest and
// in the canonical line the version hashes.
const PolicyChild = "child"

// stepAt returns the journaled call of call, a call in a function of p,
// or nil when the call is none: a call of a wait, of a workflow (a child
// run), of a function or method declared //resume:step, or a call
// carrying a trailing //resume:step. Its names and shapes are written as
// seen from the package self (the workflow's).
func (p *Package) stepAt(self *types.Package, call *ast.CallExpr) *Step {
	info := p.Load.TypesInfo
	var site *directive.Directive
	if d, ok := p.Directives.Sites[call.Lparen]; ok {
		site = &d
	}
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	if kind := runtimeapi.WaitOf(fn); kind != runtimeapi.NotWait {
		return p.waitAt(self, call, fn, kind, site)
	}
	if fn != nil && p.Directives.WorkflowOf(fn) != nil {
		return p.childAt(self, call, fn.Origin(), site)
	}
	var declOpts directive.StepOptions
	isStep := site != nil
	if fn != nil {
		if o, ok := p.Directives.StepOf(fn); ok {
			declOpts, isStep = o, true
		}
	}
	if !isStep || fn == nil {
		return nil // the directive stage refused a directive on a call of no function
	}
	opts := declOpts
	if site != nil {
		opts = declOpts.Override(site.Step)
	}
	sig := fn.Type().(*types.Signature)
	s := &Step{Opts: opts, Site: site, Call: call, Fn: fn, Sig: sig, Policy: string(directive.PolicyDefault)}
	if opts.HasPolicy {
		s.Policy = string(opts.Policy)
	}
	if sig.TypeParams().Len() > 0 {
		// A generic function: the step is its instantiation at this call,
		// whose types enter the signature and the version.
		inst, ok := info.Instances[CalleeIdent(call.Fun)]
		if !ok {
			s.NoTypeArgs = true
			return s
		}
		sig = inst.Type.(*types.Signature)
		s.Sig, s.TypeArgs = sig, inst.TypeArgs
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if selection := info.Selections[sel]; selection != nil {
			if selection.Kind() != types.MethodVal {
				s.MethodExpr = true
				return s
			}
			s.Recv = sel.X
			s.RecvType = info.TypeOf(sel.X)
			_, recvIsPtr := sig.Recv().Type().(*types.Pointer)
			_, xIsPtr := s.RecvType.Underlying().(*types.Pointer)
			// A pointer method reached without indirection needs the
			// receiver's address, as Go takes it implicitly at the call.
			if recvIsPtr && !xIsPtr && !selection.Indirect() && !types.IsInterface(s.RecvType) {
				s.AddrRecv = true
				s.RecvType = types.NewPointer(s.RecvType)
			}
		}
	}
	s.Callee, s.Display = CalleeNames(fn, self)
	if s.TypeArgs != nil {
		s.Callee += TypeArgsString(s.TypeArgs, nil)
		s.Display += TypeArgsString(s.TypeArgs, NameQualifier(self))
	}
	s.Name = DisplayName(fn)
	if opts.Name != "" {
		s.Name = opts.Name
	}
	s.TakesCtx = sig.Params().Len() > 0 && IsContext(sig.Params().At(0).Type())
	bare := BareSignature(sig)
	s.CanonSig = types.TypeString(bare, nil)
	s.Signature = types.TypeString(bare, NameQualifier(self))
	stepTypes(s, self)
	if s.ResultsValid {
		p.stepRefs(s, self)
		s.JSON = journaledType(s, s.Sig.Params(), NameQualifier(self))
	}
	if opts.Key != "" {
		s.KeyExpr = p.key(opts, call)
		if sig.Variadic() {
			s.KeyExpr.Err = fmt.Errorf("key= on a call of a variadic function is not supported: wrap the call in a non-variadic function and mark that one")
		}
	}
	return s
}

// stepTypes records what the step journals: its results (all but a
// trailing error), and the pointees of its pointer parameters that JSON
// carries entirely, which the wrapper journals after the call and writes
// back on replay; and the JSON shape and type of it all.
func stepTypes(s *Step, self *types.Package) {
	q := NameQualifier(self)
	res := s.Sig.Results()
	s.Values, s.HasErr, s.ResultsValid = SplitResults(res)
	if !s.ResultsValid {
		return
	}
	for n, i := range s.Values {
		role := "result"
		if len(s.Values) > 1 {
			role = fmt.Sprintf("result %d", n+1)
		}
		s.Shape = append(s.Shape, jsontype.Shape(role, res.At(i).Type(), q)...)
	}
	params := s.Sig.Params()
	for i := 0; i < params.Len(); i++ {
		if i == 0 && s.TakesCtx {
			continue
		}
		t := params.At(i).Type()
		variadic := s.Sig.Variadic() && i == params.Len()-1
		if variadic {
			t = t.(*types.Slice).Elem()
		}
		// Parameters are not journaled: the replayed body computes them
		// again. Only what the step may write through a pointer is.
		ptr, isPtr := t.Underlying().(*types.Pointer)
		if !isPtr {
			continue
		}
		pt := Pointer{Index: i, Type: t, Variadic: variadic}
		pt.Err = jsontype.RoundTrip(ptr.Elem(), q)
		if pt.Err != nil {
			pt.HoldsResult, pt.Buffer = MayHoldResult(ptr.Elem())
		} else if !variadic {
			s.OutArgs = append(s.OutArgs, i)
			s.Shape = append(s.Shape, jsontype.Shape(fmt.Sprintf("out arg %d", i+1), ptr.Elem(), q)...)
		}
		s.Pointers = append(s.Pointers, pt)
	}
}

// dependencyTypes are standard-library types with exported fields that a
// step takes as a dependency, not to write its result into: their fields
// configure them.
var dependencyTypes = map[string]bool{
	"net/http.Client": true, "net/http.Transport": true, "crypto/tls.Config": true,
	"text/template.Template": true, "html/template.Template": true,
}

// MayHoldResult says why a value of t, which JSON cannot carry, may hold
// what a step writes into it through a pointer (its exported fields, or,
// with buffer set, a buffer's contents), or returns "" for a dependency: a
// type with no exported field (*sql.DB, *slog.Logger, a service of
// unexported clients) or a known configured client.
func MayHoldResult(t types.Type) (why string, buffer bool) {
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
	r := jsontype.NewRenderer(q)
	res := s.Sig.Results()
	if !s.NeedsOut() {
		if len(s.Values) == 1 {
			return r.Type(res.At(s.Values[0]).Type())
		}
		return "null"
	}
	var fields []string
	for _, i := range append(append([]int(nil), s.OutArgs...), s.RefArgs...) {
		_, key := OutField(i)
		fields = append(fields, key+" "+r.Type(params.At(i).Type()))
	}
	for n, i := range s.Values {
		_, key := s.ResultField(n)
		fields = append(fields, key+" "+r.Type(res.At(i).Type()))
	}
	sort.Strings(fields)
	return "struct{" + strings.Join(fields, "; ") + "}"
}

// stringer is fmt.Stringer, built once.
var stringer = types.NewInterfaceType([]*types.Func{
	types.NewFunc(token.NoPos, nil, "String", types.NewSignatureType(nil, nil, nil, nil,
		types.NewTuple(types.NewParam(token.NoPos, nil, "", types.Typ[types.String])), false)),
}, nil).Complete()

// key type-checks a call site's key=EXPR in the scope of the call and
// decides how the wrapper turns its value into a string. EXPR is evaluated
// as the last argument of the wrapper, after the call's own arguments, as
// Go evaluates arguments left to right.
func (p *Package) key(opts directive.StepOptions, call *ast.CallExpr) *Key {
	k := &Key{Source: opts.KeySource, Canonical: opts.Key}
	if k.Source == "" {
		k.Source = opts.Key
	}
	expr, err := parser.ParseExpr(k.Source)
	if err != nil {
		k.Err = fmt.Errorf("key=%s: %v", k.Source, err)
		return k
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}}
	if err := types.CheckExpr(p.Load.Fset, p.Load.Types, call.Pos(), expr, info); err != nil {
		k.Err = fmt.Errorf("key=%s does not type-check at the call: %s", k.Source, stripPosition(err))
		return k
	}
	k.Expr, k.Uses, k.Type = expr, info.Uses, types.Default(info.Types[expr].Type)
	basic, _ := k.Type.Underlying().(*types.Basic)
	switch {
	case types.Implements(k.Type, stringer):
		k.Conv = KeyStringer
	case basic != nil && basic.Info()&types.IsString != 0:
		k.Conv = KeyString
	case basic != nil && basic.Info()&types.IsUnsigned != 0:
		k.Conv = KeyUnsigned
	case basic != nil && basic.Info()&types.IsInteger != 0:
		k.Conv = KeySigned
	default:
		k.Err = fmt.Errorf("key=%s has type %s: a key must be a string, an integer or a fmt.Stringer", k.Source, TypeString(k.Type, p.Load.Types))
	}
	return k
}

// stripPosition drops the position prefix of a go/types error, which for
// a key expression points into the directive, not into a file.
func stripPosition(err error) string {
	if te, ok := err.(types.Error); ok {
		return te.Msg
	}
	return err.Error()
}

// waitAt returns the journaled point of a call of the wait fn (kind).
func (p *Package) waitAt(self *types.Package, call *ast.CallExpr, fn *types.Func, kind runtimeapi.Wait, site *directive.Directive) *Step {
	info := p.Load.TypesInfo
	sig := fn.Type().(*types.Signature)
	s := &Step{Call: call, Fn: fn, Wait: kind, Site: site, Policy: string(directive.PolicyDefault), TakesCtx: true, ResultsValid: true}
	if kind == runtimeapi.Await {
		inst, ok := info.Instances[CalleeIdent(call.Fun)]
		if !ok {
			s.NoTypeArgs = true
			return s
		}
		sig, s.TypeArgs = inst.Type.(*types.Signature), inst.TypeArgs
	}
	s.Sig = sig
	// The callee is the runtime's function, without type arguments: T
	// enters the version through the signature and the shape.
	s.Callee, s.Display = CalleeNames(fn, self)
	if s.TypeArgs != nil {
		s.Display += TypeArgsString(s.TypeArgs, NameQualifier(self))
	}
	bare := BareSignature(sig)
	s.CanonSig = types.TypeString(bare, nil)
	s.Signature = types.TypeString(bare, NameQualifier(self))
	if kind == runtimeapi.Sleep {
		s.Name = runtimeapi.SleepStepName
		return s
	}
	if len(call.Args) >= 2 {
		s.AwaitName = call.Args[1]
		if tv := info.Types[s.AwaitName]; tv.Value != nil && tv.Value.Kind() == constant.String {
			s.AwaitConst = constant.StringVal(tv.Value)
		}
	}
	s.Name = s.AwaitConst
	// The payload is the wait's journaled result, which a Signal is
	// checked against.
	q := NameQualifier(self)
	t := s.TypeArgs.At(0)
	s.Values, s.HasErr = []int{0}, true
	s.Shape = jsontype.Shape("result", t, q)
	s.JSON = jsontype.TypeString(t, q)
	return s
}

// childAt returns the step of call, a call of the workflow fn: a child
// run. Only name= and key= apply at a child call site: the child's own
// steps carry their policies.
func (p *Package) childAt(self *types.Package, call *ast.CallExpr, fn *types.Func, site *directive.Directive) *Step {
	sig := fn.Type().(*types.Signature)
	s := &Step{Call: call, Fn: fn, Sig: sig, Site: site, Policy: PolicyChild, Child: true, TakesCtx: true}
	if d := p.Directives.WorkflowOf(fn); d != nil {
		s.ChildOld, s.ChildQueue = d.Workflow.OldOf, d.Workflow.Queue
	}
	s.Values, s.HasErr, s.ResultsValid = SplitResults(sig.Results())
	if site != nil {
		s.Opts.Name, s.Opts.Key, s.Opts.KeySource = site.Step.Name, site.Step.Key, site.Step.KeySource
		s.Opts.Renamed, s.Opts.RenamedPos = site.Step.Renamed, site.Step.RenamedPos
	}
	s.Callee, s.Display = CalleeNames(fn, self)
	s.Name = fn.Name()
	if s.Opts.Name != "" {
		s.Name = s.Opts.Name
	}
	bare := BareSignature(sig)
	s.CanonSig = types.TypeString(bare, nil)
	s.Signature = types.TypeString(bare, NameQualifier(self))
	q := NameQualifier(self)
	p.stepRefs(s, self) // the children check refuses what the child writes into
	// The parent journals the child's output as this step's result.
	s.JSON = journaledType(s, sig.Params(), q)
	if res := sig.Results(); res.Len() == 2 {
		s.Shape = jsontype.Shape("result", res.At(0).Type(), q)
	}
	if s.Opts.Key != "" && !sig.Variadic() {
		s.KeyExpr = p.key(s.Opts, call)
	}
	return s
}

// StepNameAt names the journaled call of a call, in a function of any
// package read from source, for messages about what a helper reaches:
// its name= or its callee's default step name, or for a wait resume.Sleep
// or the event name of an Await.
func (p *Package) StepNameAt(call *ast.CallExpr) string {
	if call == nil {
		return "?"
	}
	q := p.PackageAt(call.Pos())
	if d, ok := q.Directives.Sites[call.Lparen]; ok && d.Step.Name != "" {
		return d.Step.Name
	}
	if fn, ok := typeutil.Callee(q.Load.TypesInfo, call).(*types.Func); ok {
		if runtimeapi.WaitOf(fn) != runtimeapi.NotWait {
			return q.WaitNameAt(call, fn)
		}
		if o, ok := q.Directives.StepOf(fn); ok && o.Name != "" {
			return o.Name
		}
		return DisplayName(fn)
	}
	return types.ExprString(call.Fun)
}

// PackageAt is the package read from source whose file holds pos, p when
// none does.
func (p *Package) PackageAt(pos token.Pos) *Package {
	if p.Module != nil {
		if f := p.Load.Fset.File(pos); f != nil {
			for _, q := range p.Module.pkgs {
				for _, file := range q.Load.Files {
					if p.Load.Fset.File(file.Pos()) == f {
						return q
					}
				}
			}
		}
	}
	return p
}

// WaitNameAt names the journaled point of a wait call for messages:
// resume.Sleep, or the event name of an Await.
func (p *Package) WaitNameAt(call *ast.CallExpr, fn *types.Func) string {
	if runtimeapi.WaitOf(fn) == runtimeapi.Await && len(call.Args) > 1 {
		if tv := p.PackageAt(call.Pos()).Load.TypesInfo.Types[call.Args[1]]; tv.Value != nil && tv.Value.Kind() == constant.String {
			return fmt.Sprintf("resume.Await %q", constant.StringVal(tv.Value))
		}
		return "resume.Await"
	}
	return "resume." + fn.Name()
}
