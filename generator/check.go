package generator

import (
	"go/types"
)

// checkWorkflow refuses a workflow whose signature the runtime cannot
// drive: the first parameter must be a context.Context, the results error
// or (T, error), and the input and result types must be journalable.
func (m *packageModel) checkWorkflow(w *Workflow, ds *diagnostics) {
	pos := w.decl.Name.Pos()
	self := m.pkg.Types
	if w.sig.TypeParams().Len() > 0 {
		ds.errorf(pos, "workflow %s: a workflow cannot be generic", w.Name)
	}
	params := w.sig.Params()
	if params.Len() == 0 || !isContext(params.At(0).Type()) {
		ds.errorf(pos, "workflow %s: the first parameter must be a context.Context (the run's context)", w.Name)
	}
	for i := 1; i < params.Len(); i++ {
		t := params.At(i).Type()
		if w.sig.Variadic() && i == params.Len()-1 {
			t = t.(*types.Slice).Elem()
		}
		if err := journalable(t, nameQualifier(m.pkg.Types)); err != nil {
			ds.errorf(pos, "workflow %s: parameter type %s cannot be journaled as JSON (it is the run's input): %v", w.Name, typeString(t, self), err)
		}
	}
	res := w.sig.Results()
	if !resultsOK(res) {
		ds.errorf(pos, "workflow %s: returns %s; a workflow must return error or (T, error)", w.Name, tupleString(res, nameQualifier(self)))
		return
	}
	if res.Len() == 2 {
		if err := journalable(res.At(0).Type(), nameQualifier(m.pkg.Types)); err != nil {
			ds.errorf(pos, "workflow %s: result type %s cannot be journaled as JSON (it is the run's output): %v", w.Name, typeString(res.At(0).Type(), self), err)
		}
	}
}

// generatedNames assigns the identifiers the generated code declares for
// each workflow and refuses collisions with the package's own declarations
// or between workflows.
func (m *packageModel) generatedNames(ds *diagnostics) {
	taken := map[string]string{} // generated identifier → workflow
	scope := m.pkg.Types.Scope()
	for _, w := range m.workflows {
		for _, s := range w.Steps {
			s.wrapper = "resume" + w.Name + "_" + sanitizeIdent(s.Name)
		}
		names := []string{defName(w), versionName(w), bodyName(w)}
		for _, s := range w.Steps {
			names = append(names, s.wrapper)
		}
		for _, n := range names {
			if obj := scope.Lookup(n); obj != nil {
				ds.errorf(w.decl.Name.Pos(), "workflow %s: generated identifier %s collides with the declaration at %s; rename one of them", w.Name, n, m.posString(obj.Pos(), ds))
			} else if other, dup := taken[n]; dup {
				ds.errorf(w.decl.Name.Pos(), "workflow %s: generated identifier %s is also generated for workflow %s; rename a workflow or a step (name=)", w.Name, n, other)
			}
			taken[n] = w.Name
		}
	}
}

func defName(w *Workflow) string     { return "resume" + w.Name }
func versionName(w *Workflow) string { return "resume" + w.Name + "Version" }
func bodyName(w *Workflow) string    { return "resume" + w.Name + "Body" }
