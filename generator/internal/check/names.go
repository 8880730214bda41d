package check

import (
	"strings"

	"github.com/resumegen/resumegen/generator/internal/model"
	"github.com/resumegen/resumegen/generator/internal/runtimeapi"
)

// Names refuses two journaled call sites of one workflow with one journal
// name (the sleeps aside, which the runtime numbers), and a name starting
// with "resume.", which a replay would take for the runtime's own.
var Names = &Check{
	Name: "names",
	Doc:  "each journaled call site has a journal name of its own",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			for _, s := range w.Calls {
				if s.Where != model.Ordered || s.Name == "" {
					continue
				}
				if s.Wait != runtimeapi.Sleep && strings.HasPrefix(s.Name, "resume.") {
					p.Errorf(s.Call.Pos(), "%s: names starting with \"resume.\" are the runtime's own journal names (%s names the run's sleeps): choose another name", s.What(), runtimeapi.SleepStepName)
					continue
				}
				if s.Clash != nil {
					duplicate(p, s)
				}
			}
		})
	},
}

// duplicate reports s, whose name the call site s.Clash already took.
func duplicate(p *Pass, s *model.Step) {
	other := s.Clash
	at := p.PosString(other.Call.Pos())
	if s.Wait != runtimeapi.NotWait || other.Wait != runtimeapi.NotWait {
		p.Errorf(s.Call.Pos(), "%s: name %s is already used by the call at %s: steps and awaits share the run's journal names; give the await another event name, or the step another name (//resume:step name=NAME)", s.What(), s.Name, at)
		return
	}
	if s.Opts.Name != "" || other.Opts.Name != "" {
		// The name comes from a name= already: asking to add one would
		// ask for what the line has.
		p.Errorf(s.Call.Pos(), "step name %s is already used by the call at %s: both call sites are named %s, by name= or by their callee; give one of them another name= (//resume:step name=NAME at the end of its line)", s.Name, at, s.Name)
		return
	}
	p.Errorf(s.Call.Pos(), "step name %s is already used by the call at %s: add //resume:step name=NAME at the end of one call's line to tell them apart", s.Name, at)
}
