package resumeui

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/resumegen/resumegen/internal/runops"
)

// actionForm is an action's form: which action, on which run, with what.
type actionForm struct {
	Action, RunID, Step, How, Result, Version, Name, Payload string
	// Input and NewID are a fork's replacement input and new run id.
	Input, NewID string
	Running      bool
}

// confirmPage is the confirmation an action asks before it acts.
type confirmPage struct {
	Form    actionForm
	What    string
	Token   string
	RunURL  string
	Message string // after the action: what it did
	Err     string
}

func readForm(r *http.Request) actionForm {
	return actionForm{Action: r.PostFormValue("action"), RunID: r.PostFormValue("id"), Step: r.PostFormValue("step"),
		How: r.PostFormValue("how"), Result: r.PostFormValue("result"), Version: r.PostFormValue("version"),
		Name: r.PostFormValue("name"), Payload: r.PostFormValue("payload"), Running: r.PostFormValue("running") == "on",
		Input: r.PostFormValue("input"), NewID: r.PostFormValue("newid")}
}

// what says in words what the action will do, for its confirmation; ok
// is false for an unknown action.
func (f actionForm) what() (string, bool) {
	switch f.Action {
	case "resolve":
		if f.How == "done" {
			return fmt.Sprintf("Resolve step %s of run %s DONE: the run continues past it without executing it, with result %s.", f.Step, f.RunID, orNull(f.Result)), true
		}
		return fmt.Sprintf("Resolve step %s of run %s REDO: the step executes again, once.", f.Step, f.RunID), true
	case "retry":
		return fmt.Sprintf("Retry run %s: it becomes pending again, and the step whose failure ended it gets a fresh retry budget.", f.RunID), true
	case "cancel":
		s := fmt.Sprintf("Cancel run %s and its unfinished child runs: no step executes any more but those its workflow calls from defer (its compensations), then it ends cancelled.", f.RunID)
		if f.Running {
			s += " A live process running it stops within a second: the step executing now has its context cancelled, and its outcome is journaled."
		}
		return s, true
	case "accept":
		return fmt.Sprintf("Accept version %s for run %s: its journaled steps whose keys that version still has will not run again.", orNewest(f.Version), f.RunID), true
	case "signal":
		return fmt.Sprintf("Send signal %s to run %s with payload %s.", f.Name, f.RunID, f.Payload), true
	case "fork":
		id, input := f.NewID, "the run's own input"
		if id == "" {
			id = f.RunID + "~forkN (the first N free)"
		}
		if f.Input != "" {
			input = "input " + f.Input
		}
		return fmt.Sprintf("Fork run %s from step %s: a new run %s, pinned to its version, with %s, replays the steps journaled before %s and executes %s and what follows. Run %s is not changed.",
			f.RunID, f.Step, id, input, f.Step, f.Step, f.RunID), true
	}
	return "", false
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func orNewest(s string) string {
	if s == "" {
		return "(the newest stored)"
	}
	return s
}

// action asks for confirmation of an action, then, posted again with
// confirm=yes, does it with the checks resumectl makes (package runops).
func (u *ui) action(w http.ResponseWriter, r *http.Request) {
	switch {
	case !u.opts.Write:
		fail(w, http.StatusForbidden, "this UI is read-only: start it with -write (Options.Write) to act on runs")
		return
	case !u.tokenOK(r):
		fail(w, http.StatusForbidden, "the form's CSRF token is missing or stale: reload the page")
		return
	}
	f := readForm(r)
	what, ok := f.what()
	if !ok {
		fail(w, http.StatusBadRequest, fmt.Sprintf("unknown action %q", f.Action))
		return
	}
	p := confirmPage{Form: f, What: what, Token: u.token, RunURL: runURL(f.RunID)}
	if r.PostFormValue("confirm") != "yes" {
		render(w, "confirm.html", p)
		return
	}
	res, err := u.do(r, f)
	if err != nil {
		code := http.StatusConflict
		if errors.Is(err, runops.ErrUsage) {
			code = http.StatusBadRequest
		}
		status(w, code)
		p.Err = err.Error()
	}
	p.Message = res.Message
	render(w, "done.html", p)
}

// do acts: the same functions resumectl's commands call.
func (u *ui) do(r *http.Request, f actionForm) (runops.Result, error) {
	ctx := runops.WithActor(r.Context(), u.actor(r))
	switch f.Action {
	case "resolve":
		return runops.Resolve(ctx, u.j, f.RunID, f.Step, f.How == "done", f.How == "redo", f.Result)
	case "retry":
		return runops.Retry(ctx, u.j, f.RunID)
	case "cancel":
		return runops.Cancel(ctx, u.j, f.RunID, f.Running, u.opts.Now(), `"also while it runs"`)
	case "accept":
		return runops.Accept(ctx, u.j, f.RunID, f.Version)
	case "signal":
		return runops.Signal(ctx, u.j, f.RunID, f.Name, f.Payload)
	case "fork":
		return runops.Fork(ctx, u.j, f.RunID, f.Step, f.Input, f.NewID)
	}
	return runops.Result{}, fmt.Errorf("%w: unknown action %q", runops.ErrUsage, f.Action)
}

// actor is who acts through request r, recorded with the action: the
// signed-in or proxy-vouched user, from the request's remote address.
func (u *ui) actor(r *http.Request) runops.Actor {
	who, _ := r.Context().Value(userKey{}).(string)
	if who == "" {
		who = "anonymous (no sign-in)"
	}
	from := r.RemoteAddr
	if f := r.Header.Get("X-Forwarded-For"); f != "" && u.fromTrustedProxy(r) {
		from = f + " via proxy " + r.RemoteAddr
	}
	return runops.Actor{Name: who, Origin: from, Via: "ui"}
}

// userKey carries the authenticated user in a request's context.
type userKey struct{}
