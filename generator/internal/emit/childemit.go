package emit

import (
	"fmt"
	"github.com/resumegen/resumegen/generator/internal/model"

	"github.com/dave/jennifer/jen"
)

// childWrapper emits the wrapper of a call of a workflow from a workflow:
// the call runs as a child run, whose outcome is the step's. The workflow
// function is passed as itself (its generated init registered it), the
// plain call for use outside a run, and the parameters after the context
// as the child's journaled input:
//
//	// resumeTransfer_Notify runs workflow Notify as a child run of Transfer (step 4).
//	func resumeTransfer_Notify(ctx context.Context, n Notice) (int, error) {
//		return resume.CallChild(ctx, &resumeTransfer.Steps[4], Notify, func(ctx context.Context) (int, error) {
//			return Notify(ctx, n)
//		}, n)
//	}
func (e *workflowEmitter) childWrapper(f *jen.File, s *model.Step) {
	sig := s.Sig
	params := sig.Params()
	ws := e.wrapperSig(s)
	paramTypes, results, callee, keyType := ws.paramTypes, ws.results, ws.callee, ws.keyType
	ctxType := e.std("context", "Context")
	journal := e.rt(journalCall("CallChild", s))
	keyConv := e.keyConversion(s.KeyExpr)
	names := e.wrapperNames(s, ws)
	ctx := names.pick("ctx", "ctx")
	wparams := []jen.Code{jen.Id(ctx).Add(ctxType)}
	inner := []jen.Code{jen.Id(ctx)}
	var input []jen.Code // the child's input: a variadic parameter as its slice
	for i := 1; i < params.Len(); i++ {
		name := names.pick(params.At(i).Name(), fmt.Sprintf("arg%d", i))
		if sig.Variadic() && i == params.Len()-1 {
			wparams = append(wparams, jen.Id(name).Op("...").Id(paramTypes[i]))
			inner = append(inner, jen.Id(name).Op("..."))
		} else {
			wparams = append(wparams, jen.Id(name).Id(paramTypes[i]))
			inner = append(inner, jen.Id(name))
		}
		input = append(input, jen.Id(name))
	}
	args := []jen.Code{jen.Id(ctx), e.ref(s, ctx)}
	desc := ""
	if s.KeyExpr != nil {
		name := names.pick("key", "stepKey")
		wparams = append(wparams, jen.Id(name).Id(keyType))
		args = append(args, keyConv(name))
		desc = ", key=" + s.Opts.Key
	}
	args = append(args, jen.Id(callee),
		jen.Func().Params(jen.Id(ctx).Add(ctxType)).Params(results...).Block(
			jen.Return(jen.Id(callee).Call(inner...)),
		))
	args = append(args, input...)
	f.Comment(fmt.Sprintf("%s runs workflow %s as a child run of %s (step %s%s).", s.Wrapper, s.Display, e.owner, s.Name, desc))
	f.Func().Id(s.Wrapper).Params(wparams...).Params(results...).Block(
		jen.Return(journal.Call(args...)),
	)
	f.Line()
}
