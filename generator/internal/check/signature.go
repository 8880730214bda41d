package check

import (
	"go/types"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// Signature refuses a workflow whose signature the runtime cannot drive:
// a method of a generic or unnamed type, a generic function, a first
// parameter that is not a context.Context, results that are not error or
// (T, error), and an input or a result JSON cannot journal.
var Signature = &Check{
	Name: "signature",
	Doc:  "a workflow takes a context.Context first and returns error or (T, error), with journalable input and output",
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			for _, w := range pkg.Workflows {
				signature(p, w)
			}
		}
	},
}

func signature(p *Pass, w *model.Workflow) {
	if w.BadRecv {
		d := w.Directive
		p.Errorf(d.Pos, "%s: %s is a method of a generic or unnamed type: a workflow may be a method of a named type of its package, whose value the engine is given to run it on (resume.WithReceiver)", d.Text, w.Decl.Name.Name)
		return
	}
	pos := w.Decl.Name.Pos()
	self := w.Pkg().Load.Types
	q := model.NameQualifier(self)
	if w.Sig.TypeParams().Len() > 0 {
		p.Errorf(pos, "workflow %s: a workflow cannot be generic: its journaled input and output need one type, and its version one step list; declare a workflow per type you run it with, each calling the steps with its own types", w.Name)
		return // its type parameters are not types JSON can be checked for
	}
	params := w.Sig.Params()
	if params.Len() == 0 || !model.IsContext(params.At(0).Type()) {
		p.Errorf(pos, "workflow %s: the first parameter must be a context.Context (the run's context)", w.Name)
	}
	for i := 1; i < params.Len(); i++ {
		t := params.At(i).Type()
		if w.Sig.Variadic() && i == params.Len()-1 {
			t = t.(*types.Slice).Elem()
		}
		if err := journaled(t, q); err != nil {
			p.Errorf(pos, "workflow %s: parameter type %s cannot be journaled as JSON (it is the run's input): %v", w.Name, model.TypeString(t, self), err)
		}
	}
	res := w.Sig.Results()
	if !model.ResultsOK(res) {
		p.Errorf(pos, "workflow %s: returns %s; a workflow must return error or (T, error)", w.Name, model.TupleString(res, q))
		return
	}
	if res.Len() == 2 {
		if err := journaled(res.At(0).Type(), q); err != nil {
			p.Errorf(pos, "workflow %s: result type %s cannot be journaled as JSON (it is the run's output): %v", w.Name, model.TypeString(res.At(0).Type(), self), err)
		}
	}
}
