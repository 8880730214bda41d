package emit

import (
	"fmt"
	"path/filepath"

	"github.com/dave/jennifer/jen"
)

// handle emits the workflow's run handle: a type naming one run, with a
// typed sender for each event its steps await and a typed Wait for its
// output. The compiler checks the event's name (a method) and its
// payload's type; the runtime checks that the run is one of this
// workflow's (resume.SignalRun, resume.WaitRun):
//
//	// ApproveRun is a run of workflow Approve, by its id: ...
//	type ApproveRun struct {
//		Engine *resume.Engine
//		ID     string
//	}
//
//	// SignalApproval sends the event "approval" to the run, which awaits it
//	// with resume.Await[Decision] (approval.go:75).
//	func (r ApproveRun) SignalApproval(ctx context.Context, payload Decision) error {
//		return resume.SignalRun(ctx, r.Engine, resumeApprove, r.ID, "approval", payload)
//	}
//
//	// Wait waits until the run has finished and returns its output.
//	func (r ApproveRun) Wait(ctx context.Context) (Outcome, error) {
//		return resume.WaitRun[Outcome](ctx, r.Engine, resumeApprove, r.ID)
//	}
func (e *workflowEmitter) handle(f *jen.File) {
	w := e.w
	if w.Old {
		return // an old version's runs are its current workflow's
	}
	name := w.HandleName()
	ctxType := e.std("context", "Context")
	engine := e.rt("Engine")
	f.Comment(fmt.Sprintf("// %s is a run of workflow %s, by its id, in an engine. Its methods\n"+
		"// send each event the workflow awaits, with the payload type it awaits, and\n"+
		"// Wait returns its output: a wrong event name or payload type does not\n"+
		"// compile, and a run of another workflow is refused (resume.ErrOtherWorkflow).\n//\n"+
		"//\t%s{Engine: engine, ID: runID}.Wait(ctx)", name, w.Name, name))
	f.Type().Id(name).Struct(
		jen.Id("Engine").Op("*").Add(engine),
		jen.Id("ID").String(),
	)
	f.Line()
	for _, s := range w.Steps {
		if !s.IsAwait() || s.AwaitConst == "" {
			continue
		}
		names := e.locals(w.DefName())
		pt := e.typ(s.TypeArgs.At(0))
		for _, id := range identsIn(pt) {
			names.taken[id] = true
		}
		r, ctx, payload := names.pick("r", "r"), names.pick("ctx", "ctx"), names.pick("payload", "payload")
		where := ""
		if s.Pos != "" {
			where = " (" + filepath.Base(s.Pos) + ")"
		}
		f.Comment(fmt.Sprintf("// %s sends the event %q to the run, which awaits it with\n// resume.Await[%s]%s.", s.SignalMethod(), s.Name, pt, where))
		f.Func().Params(jen.Id(r).Id(name)).Id(s.SignalMethod()).Params(jen.Id(ctx).Add(ctxType), jen.Id(payload).Id(pt)).Error().Block(
			jen.Return(e.rt("SignalRun").Call(jen.Id(ctx), jen.Id(r).Dot("Engine"), jen.Id(w.DefName()), jen.Id(r).Dot("ID"), jen.Lit(s.Name), jen.Id(payload))),
		)
		f.Line()
	}
	names := e.locals(w.DefName())
	res := w.Sig.Results()
	var out string
	if res.Len() == 2 {
		out = e.typ(res.At(0).Type())
		for _, id := range identsIn(out) {
			names.taken[id] = true
		}
	}
	r, ctx := names.pick("r", "r"), names.pick("ctx", "ctx")
	args := []jen.Code{jen.Id(ctx), jen.Id(r).Dot("Engine"), jen.Id(w.DefName()), jen.Id(r).Dot("ID")}
	if res.Len() == 2 {
		f.Comment("Wait waits until the run has finished and returns its output; see resume.Engine.Wait.")
		f.Func().Params(jen.Id(r).Id(name)).Id("Wait").Params(jen.Id(ctx).Add(ctxType)).Params(jen.Id(out), jen.Error()).Block(
			jen.Return(e.rt("WaitRun").Index(jen.Id(out)).Call(args...)),
		)
	} else {
		f.Comment("Wait waits until the run has finished and returns its error; see resume.Engine.Wait.")
		f.Func().Params(jen.Id(r).Id(name)).Id("Wait").Params(jen.Id(ctx).Add(ctxType)).Error().Block(
			jen.Return(e.rt("WaitRun0").Call(args...)),
		)
	}
	f.Line()
}
