package check

import (
	"go/constant"
	"go/types"
	"strconv"

	"github.com/resumegen/resumegen/generator/internal/directive"
	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Waits refuses a //resume:step on a call of one of the runtime's waits
// (the runtime journals them), an Await whose event name is not a constant
// step name, and an Await whose payload type JSON cannot journal.
var Waits = &Check{
	Name: "waits",
	Doc:  "a wait is called as written, an Await names its event with a constant, and its payload is journalable",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, s := range w.Calls {
				if s.Wait != runtimeapi.NotWait {
					wait(p, pkg, s)
				}
			}
		})
	},
}

func wait(p *Pass, pkg *model.Package, s *model.Step) {
	if s.Site != nil {
		p.Errorf(s.Site.Pos, "%s: resume.%s is journaled by the runtime itself, not as a step: remove the directive", s.Site.Text, s.Fn.Name())
		return
	}
	if s.NoTypeArgs {
		p.Errorf(s.Call.Pos(), "resume.Await: cannot tell its type argument: write it, resume.Await[T](ctx, NAME, timeout)")
		return
	}
	if s.Wait != runtimeapi.Await || s.AwaitName == nil {
		return // a sleep; or an Await go/types reported the arguments of
	}
	arg := s.AwaitName
	tv := s.In.Info().Types[arg]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		p.Errorf(arg.Pos(), "resume.Await: its event name (%s) is not a constant string: it is the wait's journal name and the name a Signal addresses, so it must be the same each time the run resumes; write a string literal or a constant (\"approval\"), and pass what varies in the payload", types.ExprString(arg))
		return
	}
	if !directive.ValidName(s.AwaitConst) {
		p.Errorf(arg.Pos(), "resume.Await: bad event name %s: an event name is a step name, letters, digits, '_', '.', '-' or '/'", strconv.Quote(s.AwaitConst))
		return
	}
	self := pkg.Load.Types
	t := s.TypeArgs.At(0)
	if err := journaled(t, model.NameQualifier(self)); err != nil {
		p.Errorf(s.Call.Pos(), "%s: payload type %s cannot be journaled as JSON: %v", s.What(), model.TypeString(t, self), err)
	}
}
