package check

// Unreached refuses a call-site directive in a function that no
// workflow's step search walked: it would mark nothing.
var Unreached = &Check{
	Name: "unreached",
	Doc:  "a call-site directive in a function no workflow body reaches marks nothing",
	Run: func(p *Pass) {
		for _, pkg := range p.Packages {
			for _, ib := range pkg.Directives.InBodies {
				if !pkg.Reached[ib.Func] {
					p.Errorf(ib.Directive.Pos, "%s: directive inside %s, which is neither a //resume:workflow nor a function a workflow body calls: a call-site directive only marks calls in a workflow body or in the helpers it calls", ib.Directive.Text, ib.Func.Name.Name)
				}
			}
		}
	},
}
