package check

import (
	"go/token"

	"github.com/resumegen/resumegen/generator/internal/model"
)

// Renames refuses renamed-from= names that would make journaled rows
// count for the wrong step: the step's own name, another step's name, or
// a name two steps claim.
var Renames = &Check{
	Name: "renames",
	Doc:  "renamed-from= names a step's own earlier name",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) { renames(p, w) })
	},
}

func renames(p *Pass, w *model.Workflow) {
	current := map[string]bool{}
	for _, s := range w.Steps {
		current[s.Name] = true
	}
	claimedBy := map[string]string{}
	for _, s := range w.Steps {
		pos := s.Opts.RenamedPos
		if pos == token.NoPos {
			pos = s.Call.Pos()
		}
		for _, old := range s.Opts.Renamed {
			switch {
			case old == s.Name:
				p.Errorf(pos, "renamed-from=%s: %s is step %s's own name: renamed-from= lists the names the step had before; drop it", old, old, s.Name)
			case current[old]:
				p.Errorf(pos, "renamed-from=%s on step %s: %s is the name of another step of workflow %s, whose rows are that step's: drop renamed-from=%s, or rename that step too", old, s.Name, old, w.Name, old)
			case claimedBy[old] != "" && claimedBy[old] != s.Name:
				p.Errorf(pos, "renamed-from=%s on steps %s and %s of workflow %s: rows named %s can count for one step only; keep it on the step that had the name", old, claimedBy[old], s.Name, w.Name, old)
			default:
				claimedBy[old] = s.Name
			}
		}
	}
}
