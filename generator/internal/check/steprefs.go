package check

import (
	"fmt"

	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// StepRefs refuses a step (or a child workflow's call) that may change,
// through a parameter that is not a pointer, what the body handed it in a
// way the journal does not restore on replay, where the step does not
// execute again: writes into a slice or map it is handed that JSON cannot
// carry whole, or whose elements are references; appends to a slice it is
// handed (which may write past its length); writes into a slice or map of
// a struct it is handed; sends to, receives from or closes the body's
// channel; calls the body's closure or method value; writes to the body's
// own io.Writer. A slice or map the step writes into and JSON carries is
// journaled and written back instead (model.Step.RefArgs). The callee's
// code decides, read from the module's source; a callee whose body is not
// read (another module's, an interface method) is refused when it takes
// a slice, a map or a struct holding one, or the body's own channel,
// closure or writer. A child run decodes its input from the journal, so
// whatever it writes never reaches the caller: any such use is refused.
var StepRefs = &Check{
	Name: "steprefs",
	Doc:  "a step changes nothing the body handed it that a replay would not restore",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, s := range w.Calls {
				if s.Wait != runtimeapi.NotWait {
					continue
				}
				for _, r := range s.Refs {
					if msg := refProblem(s, r, pkg); msg != "" {
						p.Errorf(s.Call.Pos(), "%s%s", msg, s.In.Via())
					}
				}
			}
		})
	},
}

// refKinds name the kinds of Ref for messages.
var refKinds = map[model.RefKind]string{
	model.RefSlice: "slice", model.RefMap: "map", model.RefChan: "channel",
	model.RefFunc: "function", model.RefWriter: "writer", model.RefHolder: "struct holding references",
}

// refProblem says why the journal cannot restore what the step does
// through r, "" when it can.
func refProblem(s *model.Step, r model.Ref, pkg *model.Package) string {
	param := fmt.Sprintf("parameter %d (%s, a %s)", r.Index+1, model.TypeString(r.Type, pkg.Load.Types), refKinds[r.Kind])
	for _, i := range s.RefArgs {
		if i == r.Index {
			return "" // journaled and written back
		}
	}
	byBody := r.Kind == model.RefChan || r.Kind == model.RefFunc || r.Kind == model.RefWriter
	if byBody && !r.Owned {
		return "" // a dependency of the step's, or package state: the step's own effect
	}
	what := s.What()
	if s.Child {
		return fmt.Sprintf("%s takes %s, and its body %s: a child run decodes its input from the journal, so that never reaches this caller; pass what it reads and return what it computes", what, param, r.Use.Why)
	}
	const wrap = "wrap the call in a function of this module that takes what the step reads and returns what it computes, and mark that function //resume:step"
	if r.Unread {
		return fmt.Sprintf("%s: %s is declared outside the module (or is an interface method), so the generator cannot tell whether it changes %s, which a replay would not restore: %s", what, s.Display, param, wrap)
	}
	const ret = "return what the step computes instead, and let the body put it there"
	switch {
	case r.Use.Appends && r.Kind == model.RefSlice:
		return fmt.Sprintf("%s appends to %s (%s), which may write into the body's array past the slice's length, where the journal cannot restore it on replay: %s", what, param, r.Use.AppendsWhy, ret)
	case r.Kind == model.RefSlice || r.Kind == model.RefMap:
		why := "its elements are references, which a journaled copy would not restore"
		if r.Err != nil {
			why = r.Err.Error()
		}
		return fmt.Sprintf("%s writes into %s (%s), which is journaled to be restored on replay, but %s: %s", what, param, r.Use.Why, why, ret)
	case r.Kind == model.RefHolder:
		return fmt.Sprintf("%s writes into what %s refers to (%s), which the journal does not restore on replay: %s", what, param, r.Use.Why, ret)
	case r.Kind == model.RefChan:
		return fmt.Sprintf("%s uses the body's channel, %s (%s): a replay does not execute the step, so the body would not see those sends and receives again; receive or send in the body, on what the step returns", what, param, r.Use.Why)
	case r.Kind == model.RefFunc:
		return fmt.Sprintf("%s calls %s, which the body handed it (%s): a closure's effects on the body's state are not journaled, so a replay would miss them; pass a function of package scope, or return what the step computes", what, param, r.Use.Why)
	case r.Kind == model.RefWriter:
		return fmt.Sprintf("%s writes to the body's own writer, %s (%s), which the journal does not record, so a replay would leave it without what the step wrote: %s", what, param, r.Use.Why, ret)
	}
	return ""
}
