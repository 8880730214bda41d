package generator

import (
	"bytes"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/dave/jennifer/jen"
)

// resumePath is the import path of the runtime package generated code uses.
const resumePath = "github.com/resumegen/resumegen/runtime/resume"

// emitFile renders the generated file for the workflows of one source
// file, in source order.
func emitFile(ws []*Workflow) ([]byte, error) {
	first := ws[0]
	imports := newImportSet(first.pkg, first.file)
	f := jen.NewFilePathName(first.pkg.PkgPath, first.pkg.Name)
	f.HeaderComment(generatedHeader)
	f.NoFormat = true // addImports formats the whole file once
	// Every package the generated code names goes through imports, never
	// through jen.Qual: jennifer would pick names blind to the source
	// file's imports and the package's own declarations.
	rt := imports.named(resumePath, "resume")

	f.Comment(fmt.Sprintf("// This file is the durable form of the workflows in %s: each step\n"+
		"// call goes through the resume journal. Regenerate with go generate.", filepath.Base(first.source)))
	f.Line()
	f.Comment("A build error here means the runtime is older than this generated code.")
	f.Const().Id("_").Op("=").Id(rt).Dot("SupportPackageIsVersion1")

	for _, w := range ws {
		e := &workflowEmitter{w: w, imports: imports}
		if err := e.emit(f); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render generated code for %s: %w", first.source, err)
	}
	return addImports(buf.Bytes(), imports.needed())
}

// addImports writes the import block of the generated file, with the
// imports the generated code, the copied bodies and the user's types need,
// standard library first, and formats the result. Jennifer renders no
// import block of its own: the generated code names every package through
// an importSet.
func addImports(src []byte, needed [][2]string) ([]byte, error) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
	if err != nil {
		return nil, fmt.Errorf("parse generated code: %w", err)
	}
	if len(file.Imports) > 0 {
		return nil, fmt.Errorf("generated code imports %s on its own: name packages through the importSet", file.Imports[0].Path.Value)
	}
	start := fset.Position(file.Name.End()).Offset
	end := start
	var std, other []string
	for _, imp := range needed {
		line := strconv.Quote(imp[1])
		if imp[0] != "" {
			line = imp[0] + " " + line
		}
		if strings.Contains(strings.SplitN(imp[1], "/", 2)[0], ".") {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	var b bytes.Buffer
	b.Write(src[:start])
	b.WriteString("\n\nimport (\n")
	for _, l := range std {
		b.WriteString("\t" + l + "\n")
	}
	if len(std) > 0 && len(other) > 0 {
		b.WriteString("\n")
	}
	for _, l := range other {
		b.WriteString("\t" + l + "\n")
	}
	b.WriteString(")")
	b.Write(src[end:])
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated code: %w", err)
	}
	return out, nil
}

// workflowEmitter emits the declarations of one workflow.
type workflowEmitter struct {
	w       *Workflow
	imports *importSet
}

func (e *workflowEmitter) typ(t types.Type) string { return types.TypeString(t, e.imports.qualifier) }

// rt names an identifier of the runtime package: resume.Call, or
// resume2.Call when the source file or the package has a resume of its own.
func (e *workflowEmitter) rt(name string) *jen.Statement {
	return jen.Id(e.imports.named(resumePath, "resume")).Dot(name)
}

// std names an identifier of a standard library package whose name is the
// last element of its path: context.Context, time.Second, ...
func (e *workflowEmitter) std(path, name string) *jen.Statement {
	return jen.Id(e.imports.named(path, path[strings.LastIndex(path, "/")+1:])).Dot(name)
}

func (e *workflowEmitter) emit(f *jen.File) error {
	e.manifest(f)
	e.guards(f)
	e.def(f)
	e.init(f)
	body, err := durableBody(e.w, e.imports)
	if err != nil {
		return err
	}
	f.Comment(fmt.Sprintf("%s is %s with each step call routed through the journal.", bodyName(e.w), e.w.Name))
	f.Id(body)
	f.Line()
	for _, s := range e.w.Steps {
		e.wrapper(f, s)
	}
	return nil
}

// manifest emits the step list as a comment and the version constant:
//
//	// Onboard (version 3f2a9c1d0e4b5a67) runs these steps, in source order:
//	//
//	//	FetchRecords  FetchRecords  func(context.Context, Input) ([]Record, error)  default
//	const resumeOnboardVersion = "3f2a9c1d0e4b5a67"
func (e *workflowEmitter) manifest(f *jen.File) {
	w := e.w
	var b strings.Builder
	fmt.Fprintf(&b, "// %s (version %s) runs these steps, in source order:\n//\n", w.Name, w.Version)
	if len(w.Steps) == 0 {
		b.Reset()
		fmt.Fprintf(&b, "// %s (version %s) runs no steps.", w.Name, w.Version)
	} else {
		var table bytes.Buffer
		tw := tabwriter.NewWriter(&table, 0, 8, 2, ' ', 0)
		for _, s := range w.Steps {
			policy := s.Policy
			if t := s.opts.tuning(); t != "" {
				policy += " " + t
			}
			if s.key != nil {
				policy += " key=" + s.opts.key
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.display, s.Signature, policy)
		}
		tw.Flush()
		lines := strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n")
		for i, l := range lines {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("//\t" + strings.TrimRightFunc(l, unicode.IsSpace))
		}
	}
	if len(w.Exceptions) > 0 {
		b.WriteString("\n//\n// Reviewed exceptions (//resume:allow), which do not enter the version:\n//")
		for _, x := range w.Exceptions {
			fmt.Fprintf(&b, "\n//\t%s: %s: %s", x.Check, x.What, x.Reason)
		}
	}
	f.Comment(b.String())
	f.Const().Id(versionName(w)).Op("=").Lit(w.Version)
	f.Line()
}

// guards emits compile-time checks that the workflow and its steps still
// have the signatures the file was generated from:
//
//	var (
//		_ func(context.Context, Input) (Summary, error) = Onboard
//		_ func(*Client, context.Context, Owner) error   = (*Client).Notify
//	)
func (e *workflowEmitter) guards(f *jen.File) {
	w := e.w
	defs := []jen.Code{jen.Id("_").Id(e.typ(bareSignature(w.sig))).Op("=").Id(w.Name)}
	seen := map[string]bool{}
	for _, s := range w.Steps {
		if seen[s.Callee] {
			continue
		}
		seen[s.Callee] = true
		sig := bareSignature(s.sig)
		expr := e.calleeExpr(s)
		if recv := s.sig.Recv(); recv != nil {
			params := []*types.Var{types.NewParam(token.NoPos, nil, "", recv.Type())}
			for i := 0; i < sig.Params().Len(); i++ {
				params = append(params, sig.Params().At(i))
			}
			sig = types.NewSignatureType(nil, nil, nil, types.NewTuple(params...), sig.Results(), sig.Variadic())
		}
		defs = append(defs, jen.Id("_").Id(e.typ(sig)).Op("=").Id(expr))
	}
	f.Comment("// A build error here means a step or the workflow changed signature without\n// regenerating: run go generate.")
	f.Var().Defs(defs...)
	f.Line()
}

// calleeExpr is the Go expression naming the step's callee as a function
// value: F, pkg.F, T.M, (*T).M, (*pkg.T).M.
func (e *workflowEmitter) calleeExpr(s *Step) string {
	fn := s.fn
	q := ""
	if fn.Pkg() != nil {
		if n := e.imports.qualifier(fn.Pkg()); n != "" {
			q = n + "."
		}
	}
	recv := s.sig.Recv()
	if recv == nil {
		if s.typeArgs != nil {
			return q + fn.Name() + typeArgsString(s.typeArgs, e.imports.qualifier)
		}
		return q + fn.Name()
	}
	// The receiver's type names its package and, for a method of a
	// generic type, its type arguments: (*pkg.Cache[int]).Get.
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		return "(*" + e.typ(p.Elem()) + ")." + fn.Name()
	}
	return e.typ(t) + "." + fn.Name()
}

// def emits the workflow's definition:
//
//	var resumeOnboard = &resume.WorkflowDef{
//		Package: "example.com/billing",
//		Name:    "Onboard",
//		Version: resumeOnboardVersion,
//		Steps: []resume.StepDef{
//			{Name: "ScoreAll", Callee: "...", Signature: "...", Policy: resume.PolicyDefault, Attempts: 5},
//		},
//	}
func (e *workflowEmitter) def(f *jen.File) {
	w := e.w
	var steps []jen.Code
	for _, s := range w.Steps {
		steps = append(steps, jen.Line().Values(e.stepFields(s)...))
	}
	if len(steps) > 0 {
		steps = append(steps, jen.Line())
	}
	f.Var().Id(defName(w)).Op("=").Op("&").Add(e.rt("WorkflowDef")).Values(
		jen.Line().Id("Package").Op(":").Lit(w.Package),
		jen.Line().Id("Name").Op(":").Lit(w.Name),
		jen.Line().Id("Version").Op(":").Id(versionName(w)),
		jen.Line().Id("Steps").Op(":").Index().Add(e.rt("StepDef")).Values(steps...),
		jen.Line(),
	)
	f.Line()
}

// stepFields are the fields of one resume.StepDef literal; zero tuning
// fields are left out.
func (e *workflowEmitter) stepFields(s *Step) []jen.Code {
	policies := map[string]string{"default": "PolicyDefault", "once": "PolicyOnce", "tx": "PolicyTx"}
	fields := []jen.Code{
		jen.Id("Name").Op(":").Lit(s.Name),
		jen.Id("Callee").Op(":").Lit(s.Callee),
		jen.Id("Signature").Op(":").Lit(s.Signature),
		jen.Id("Policy").Op(":").Add(e.rt(policies[s.Policy])),
	}
	o := s.opts
	if o.attempts != 0 {
		fields = append(fields, jen.Id("Attempts").Op(":").Lit(o.attempts))
	}
	if o.hasBackoff {
		fields = append(fields,
			jen.Id("BackoffMin").Op(":").Add(e.duration(o.backoffMin)),
			jen.Id("BackoffMax").Op(":").Add(e.duration(o.backoffMax)))
	}
	if o.timeout != 0 {
		fields = append(fields, jen.Id("Timeout").Op(":").Add(e.duration(o.timeout)))
	}
	return fields
}

// duration renders d as N * time.Unit with the largest exact unit.
func (e *workflowEmitter) duration(d time.Duration) jen.Code {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"},
		{time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}}
	for _, u := range units {
		if d%u.d == 0 {
			return jen.Lit(int(d / u.d)).Op("*").Add(e.std("time", u.name))
		}
	}
	return e.std("time", "Duration").Call(jen.Lit(int64(d)))
}

// init emits the registration. Run is set here rather than in the
// variable's initializer because the durable body refers back to the
// definition through its steps, which would be an initialization cycle:
//
//	func init() {
//		resumeOnboard.Run = func(ctx context.Context, args resume.Args) (any, error) {
//			var in Input
//			if err := args.Decode(&in); err != nil {
//				return nil, err
//			}
//			return resumeOnboardBody(ctx, in)
//		}
//		resume.Register(Onboard, resumeOnboard)
//	}
func (e *workflowEmitter) init(f *jen.File) {
	w := e.w
	params := w.sig.Params()
	// Type strings first: they decide the package names the locals must
	// not shadow.
	ctxType, argsType := e.std("context", "Context"), e.rt("Args")
	paramTypes := make([]string, params.Len())
	for i := 1; i < params.Len(); i++ {
		paramTypes[i] = e.typ(params.At(i).Type())
	}
	names := e.locals(bodyName(w))
	ctx, args, errName := names.pick("ctx", "ctx"), names.pick("args", "args"), names.pick("err", "err")
	var decls, ptrs, callArgs []jen.Code
	callArgs = append(callArgs, jen.Id(ctx))
	for i := 1; i < params.Len(); i++ {
		name := names.pick(params.At(i).Name(), fmt.Sprintf("arg%d", i))
		arg := jen.Id(name)
		if w.sig.Variadic() && i == params.Len()-1 {
			arg = jen.Id(name).Op("...")
		}
		decls = append(decls, jen.Var().Id(name).Id(paramTypes[i]))
		ptrs = append(ptrs, jen.Op("&").Id(name))
		callArgs = append(callArgs, arg)
	}
	run := append(decls,
		jen.If(jen.Id(errName).Op(":=").Id(args).Dot("Decode").Call(ptrs...), jen.Id(errName).Op("!=").Nil()).Block(
			jen.Return(jen.Nil(), jen.Id(errName)),
		),
	)
	if w.sig.Results().Len() == 1 {
		run = append(run, jen.Return(jen.Nil(), jen.Id(bodyName(w)).Call(callArgs...)))
	} else {
		run = append(run, jen.Return(jen.Id(bodyName(w)).Call(callArgs...)))
	}
	f.Comment("// Run is set in init: the durable body refers back to " + defName(w) + " through\n// its steps, which a variable initializer cannot do.")
	f.Func().Id("init").Params().Block(
		jen.Id(defName(w)).Dot("Run").Op("=").Func().
			Params(jen.Id(ctx).Add(ctxType), jen.Id(args).Add(argsType)).
			Params(jen.Any(), jen.Error()).Block(run...),
		e.rt("Register").Call(jen.Id(w.Name), jen.Id(defName(w))),
	)
	f.Line()
}

// localNames picks the names of a generated function's parameters and
// variables: each differs from the others, from the identifiers the
// function refers to and from every package name of the generated file,
// which it would shadow.
type localNames struct {
	taken   map[string]bool
	imports *importSet
}

// locals starts the names of one generated function; refs are package-level
// identifiers its body refers to.
func (e *workflowEmitter) locals(refs ...string) *localNames {
	l := &localNames{taken: map[string]bool{}, imports: e.imports}
	for _, r := range refs {
		l.taken[r] = true
	}
	return l
}

func (l *localNames) isTaken(name string) bool {
	return l.taken[name] || l.imports.byName[name] != ""
}

// pick returns name if it is usable, else fallback, else fallback with 2,
// 3, ... appended, and takes it.
func (l *localNames) pick(name, fallback string) string {
	if name == "" || name == "_" || l.isTaken(name) {
		name = fallback
	}
	for base, i := name, 2; l.isTaken(name); i++ {
		name = base + strconv.Itoa(i)
	}
	l.taken[name] = true
	return name
}

// wrapper emits the journaling wrapper of one step call site:
//
//	// resumeOnboard_ScoreAll journals step ScoreAll of Onboard (default, retry=5).
//	func resumeOnboard_ScoreAll(ctx context.Context, recs []Record) ([]Score, error) {
//		return resume.Call(ctx, &resumeOnboard.Steps[1], func(ctx context.Context) ([]Score, error) {
//			return ScoreAll(ctx, recs)
//		})
//	}
func (e *workflowEmitter) wrapper(f *jen.File, s *Step) {
	w := e.w
	sig := s.sig
	// Type strings and package names first: they decide the names the
	// parameters must not shadow.
	params := sig.Params()
	paramTypes := make([]string, params.Len())
	for i := range paramTypes {
		t := params.At(i).Type()
		if sig.Variadic() && i == params.Len()-1 {
			t = t.(*types.Slice).Elem()
		}
		paramTypes[i] = e.typ(t)
	}
	var results []jen.Code
	var resultTypes []string
	for i := 0; i < sig.Results().Len(); i++ {
		rt := e.typ(sig.Results().At(i).Type())
		resultTypes = append(resultTypes, rt)
		results = append(results, jen.Id(rt))
	}
	recvType := ""
	if s.recv != nil {
		recvType = e.typ(s.recvType)
	}
	callee := e.calleeExpr(s)
	var keyType string
	if s.key != nil {
		keyType = e.typ(s.key.typ)
	}
	ctxType := e.std("context", "Context")
	call := "Call"
	if len(results) == 1 {
		call = "Call0"
	}
	if s.key != nil {
		call += "Key"
	}
	journal := e.rt(call)
	keyConv := e.keyConversion(s.key)

	names := e.locals(defName(w))
	for _, t := range append(append([]string{recvType, callee, keyType}, paramTypes...), resultTypes...) {
		for _, id := range identsIn(t) {
			names.taken[id] = true
		}
	}
	ctx := names.pick("ctx", "ctx")
	var wparams, inner []jen.Code
	var target *jen.Statement
	if s.recv != nil {
		name := names.pick(sig.Recv().Name(), "recv")
		wparams = append(wparams, jen.Id(name).Id(recvType))
		target = jen.Id(name).Dot(s.fn.Name())
	} else {
		target = jen.Id(callee)
	}
	wparams = append(wparams, jen.Id(ctx).Add(ctxType))
	for i := 0; i < params.Len(); i++ {
		if i == 0 && s.takesCtx {
			inner = append(inner, jen.Id(ctx))
			continue
		}
		name := names.pick(params.At(i).Name(), fmt.Sprintf("arg%d", i))
		if sig.Variadic() && i == params.Len()-1 {
			wparams = append(wparams, jen.Id(name).Op("...").Id(paramTypes[i]))
			inner = append(inner, jen.Id(name).Op("..."))
		} else {
			wparams = append(wparams, jen.Id(name).Id(paramTypes[i]))
			inner = append(inner, jen.Id(name))
		}
	}
	var keyArg []jen.Code
	if s.key != nil {
		name := names.pick("key", "stepKey")
		wparams = append(wparams, jen.Id(name).Id(keyType))
		keyArg = append(keyArg, keyConv(name))
	}
	innerCtx := jen.Id(ctx).Add(ctxType)
	if !s.takesCtx {
		innerCtx = ctxType
	}
	stepRef := jen.Op("&").Id(defName(w)).Dot("Steps").Index(jen.Lit(s.index))
	desc := s.Policy
	if t := s.opts.tuning(); t != "" {
		desc += ", " + strings.ReplaceAll(t, " ", ", ")
	}
	if s.key != nil {
		desc += ", key=" + s.opts.key
	}
	f.Comment(fmt.Sprintf("%s journals step %s of %s (%s).", s.wrapper, s.Name, w.Name, desc))
	f.Func().Id(s.wrapper).Params(wparams...).Params(results...).Block(
		jen.Return(journal.Call(append(append([]jen.Code{jen.Id(ctx), stepRef}, keyArg...),
			jen.Func().Params(innerCtx).Params(results...).Block(
				jen.Return(target.Call(inner...)),
			),
		)...)),
	)
	f.Line()
}

// keyConversion returns how the wrapper converts its key parameter, named
// by the argument, to the journal key; it names the packages it needs
// before the wrapper picks its parameter names:
//
//	key                          // string
//	string(key)                  // a named string type
//	strconv.FormatInt(int64(key), 10)
//	strconv.FormatUint(uint64(key), 10)
//	key.String()                 // fmt.Stringer
func (e *workflowEmitter) keyConversion(k *stepKey) func(name string) jen.Code {
	if k == nil {
		return nil
	}
	switch k.conv {
	case keyStringer:
		return func(name string) jen.Code { return jen.Id(name).Dot("String").Call() }
	case keySigned, keyUnsigned:
		format, wide := "FormatInt", types.Typ[types.Int64]
		if k.conv == keyUnsigned {
			format, wide = "FormatUint", types.Typ[types.Uint64]
		}
		pkg := e.imports.named("strconv", "strconv")
		return func(name string) jen.Code {
			arg := jen.Id(name)
			if !types.Identical(k.typ, wide) {
				arg = jen.Id(wide.Name()).Call(arg)
			}
			return jen.Id(pkg).Dot(format).Call(arg, jen.Lit(10))
		}
	}
	if types.Identical(k.typ, types.Typ[types.String]) {
		return func(name string) jen.Code { return jen.Id(name) }
	}
	return func(name string) jen.Code { return jen.String().Call(jen.Id(name)) }
}

// identsIn lists the identifiers in a type or expression string.
func identsIn(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
	})
}
