package check

import (
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// StepTypes refuses a step the journal cannot carry: results that are
// not (values..., error) with the error last, a result JSON cannot
// journal, a pointer parameter whose pointee may hold the step's result
// but that JSON cannot carry, a variadic pointer parameter, a call-site
// step on a pointer receiver whose state may hold the result, and a step
// called as a method expression.
var StepTypes = &Check{
	Name: "steptypes",
	Doc:  "what a step returns or writes through its parameters is journaled whole",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, s := range w.Calls {
				if s.Wait == runtimeapi.NotWait && !s.Child {
					stepTypes(p, pkg, s, true)
				}
			}
		})
	},
}

// stepTypes checks s, reporting what it refuses when report is set, and
// says whether it refused nothing (the key check needs that).
func stepTypes(p *Pass, pkg *model.Package, s *model.Step, report bool) bool {
	errorf := func(format string, args ...any) {
		if report {
			p.Errorf(s.Call.Pos(), format, args...)
		}
	}
	switch {
	case s.NoTypeArgs:
		errorf("step %s: cannot tell the type arguments of this generic call", s.Fn.Name())
		return false
	case s.MethodExpr:
		errorf("step %s: a method expression cannot be a step; call the method on a value", s.Fn.Name())
		return false
	}
	self := pkg.Load.Types
	q := model.NameQualifier(self)
	res := s.Sig.Results()
	if !s.ResultsValid {
		errorf("step %s: %s returns %s; a step's error, if it returns one, must be its last result, and the only error", s.Name, s.Display, model.TupleString(res, q))
		return false
	}
	ok := receiverOK(pkg, s, errorf)
	for _, i := range s.Values {
		t := res.At(i).Type()
		if err := journaled(t, q); err != nil {
			errorf("step %s: result type %s cannot be journaled as JSON: %v", s.Name, model.TypeString(t, self), err)
			ok = false
		}
	}
	for _, pt := range s.Pointers {
		switch {
		case pt.Err != nil && pt.Buffer:
			errorf("step %s: parameter %d (%s): %s, which the journal cannot record, so a replay would leave it empty: return the contents as the step's result instead", s.Name, pt.Index+1, model.TypeString(pt.Type, self), pt.HoldsResult)
			ok = false
		case pt.Err != nil && pt.HoldsResult != "":
			errorf("step %s: parameter %d (%s): %s, which is journaled to be restored on replay, but %v, or return what the step computes as its result instead", s.Name, pt.Index+1, model.TypeString(pt.Type, self), pt.HoldsResult, pt.Err)
			ok = false
		case pt.Err == nil && pt.Variadic:
			errorf("step %s: variadic parameter ...%s: the step may write through any of the pointers, which the journal does not record; pass a slice of values and return what the step computes", s.Name, model.TypeString(pt.Type, self))
			ok = false
		}
	}
	return ok
}

// receiverOK refuses a call-site step (a //resume:step at the call of a
// method the user did not declare a step) on a pointer receiver of a
// struct type with exported fields, or of a type that is no struct (type
// List []string; (*List).Load): its state may carry the step's result
// (cmd.Run(), then cmd.Stdout), which the journal does not record. A
// struct without exported fields, like a declared step's receiver, is a
// dependency (*sql.DB) and is not journaled.
func receiverOK(pkg *model.Package, s *model.Step, errorf func(string, ...any)) bool {
	recv := s.Sig.Recv()
	if recv == nil || s.Recv == nil {
		return true
	}
	if _, declared := pkg.Directives.StepOf(s.Fn); declared {
		return true
	}
	ptr, ok := recv.Type().(*types.Pointer)
	if !ok {
		return true
	}
	why, _ := model.MayHoldResult(ptr.Elem())
	if why == "" {
		return true
	}
	errorf("step %s: %s has a pointer receiver: %s, which the journal does not record, so a replay would read it unset: "+
		"wrap the call in a function of your own that makes it and returns what you read afterwards, and mark that function //resume:step",
		s.Name, s.Display, why)
	return false
}

// Keys refuses a step's key= that does not parse, does not type-check at
// the call, has a type no key may have (a key is a string, an integer or
// a fmt.Stringer), or stands on a call of a variadic function. A child
// call's key is the children check's.
var Keys = &Check{
	Name: "keys",
	Doc:  "key= is a string, integer or fmt.Stringer expression valid at the call",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, s := range w.Calls {
				if s.Wait != runtimeapi.NotWait || s.Child || s.KeyExpr == nil || s.KeyExpr.Err == nil {
					continue
				}
				// One pass reports every error of the call, but a key is
				// only judged on a step whose types are sound.
				if stepTypes(p, pkg, s, false) {
					p.Errorf(s.Site.Pos, "%s: %v", s.Site.Text, s.KeyExpr.Err)
				}
			}
		})
	},
}
