package check

import (
	"github.com/resumegen/resumegen/generator/internal/model"
)

// Handles refuses an Await whose event name cannot name a method of the
// workflow's run handle (no letter or digit in it), and two Awaits of a
// workflow whose event names give one method (payment-received and
// payment_received are both SignalPaymentReceived): the compiler-checked
// sender of each event is a method of its own.
var Handles = &Check{
	Name: "handles",
	Doc:  "each awaited event gets a sender method of its own on the workflow's run handle",
	Run: func(p *Pass) {
		p.workflows(func(pkg *model.Package, w *model.Workflow) {
			if w.Old {
				return
			}
			byMethod := map[string]*model.Step{}
			for _, s := range w.Steps {
				if !s.IsAwait() || s.AwaitConst == "" {
					continue
				}
				m := s.SignalMethod()
				if m == "" {
					p.Errorf(s.AwaitName.Pos(), "resume.Await %q: the event name has no letter or digit to name its sender on %s: give it a name with letters (\"approval\")", s.Name, w.HandleName())
					continue
				}
				if other := byMethod[m]; other != nil {
					p.Errorf(s.AwaitName.Pos(), "resume.Await %q: its sender %s.%s is also the sender of the event %q awaited at %s: give one of the events another name", s.Name, w.HandleName(), m, other.Name, p.PosString(other.Call.Pos()))
					continue
				}
				byMethod[m] = s
			}
		})
	},
}
