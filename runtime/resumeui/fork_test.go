package resumeui

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/journal"
)

// TestForkAction: on both journals, a writable UI offers a fork of a run
// from any of its journaled steps, asks for confirmation first (the fork
// does not exist yet, the confirmation carries the step, input and id),
// and then forks through the same code as resumectl: the new run is
// pending with the steps before -from copied, and the fork is recorded on
// both runs as the UI's; a step the run did not journal is refused with
// 409; a read-only UI offers no fork.
func TestForkAction(t *testing.T) {
	for name, open := range map[string]func(*testing.T) journal.Journal{"sqlite": openSQLite, "postgres": openPG} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			j := open(t)
			seed(t, j, 0)
			if _, body := get(t, serve(t, j, Options{}).URL+"/ops/run?id="+failedID); strings.Contains(body, `id="do-fork"`) {
				t.Error("a read-only UI offers a fork")
			}
			srv := serve(t, j, Options{Write: true})
			_, body := get(t, srv.URL+"/ops/run?id="+failedID)
			if !strings.Contains(body, `id="do-fork"`) || !strings.Contains(body, `<option value="Reserve">Reserve</option><option value="Ship">Ship</option>`) {
				t.Fatalf("the failed run's page offers no fork from Reserve or Ship:\n%s", body)
			}
			post := func(form url.Values) (int, string) {
				t.Helper()
				resp, err := http.PostForm(srv.URL+"/ops/action", form)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			fork := failedID + "-again"
			form := url.Values{"csrf": {tokenRE.FindStringSubmatch(body)[1]}, "action": {"fork"}, "id": {failedID}, "step": {"Ship"},
				"input": {`[{"id":1042,"total":"89.90"}]`}, "newid": {fork}}
			code, page := post(form)
			if _, _, err := j.LoadRun(ctx, fork); code != 200 || !errors.Is(err, journal.ErrRunNotFound) ||
				!strings.Contains(page, `name="confirm" value="yes"`) || !strings.Contains(page, `name="newid" value="`+fork+`"`) {
				t.Fatalf("the first POST: %d, fork %v; want a confirmation carrying the id, and no fork\n%s", code, err, page)
			}
			form.Set("confirm", "yes")
			if code, page = post(form); code != 200 || !strings.Contains(page, "forked to "+fork) {
				t.Fatalf("the confirmed fork: %d\n%s", code, page)
			}
			r, steps, err := j.LoadRun(ctx, fork)
			if err != nil || r.Status != journal.StatusPending || len(steps) != 1 || steps[0].StepKey != "Reserve" || string(r.Input) != `[{"id":1042,"total":"89.90"}]` {
				t.Fatalf("the fork: %+v, %d steps, %v; want pending with Reserve copied and the new input", r, len(steps), err)
			}
			for id, want := range map[string]string{failedID: journal.ForkedTo(fork, "Ship"), fork: journal.ForkedFrom(failedID, "Ship")} {
				acts, err := j.(journal.Auditor).ListActions(ctx, id)
				if err != nil || len(acts) != 1 || acts[0].Detail != want || acts[0].Via != "ui" || acts[0].Actor == "" {
					t.Errorf("run %s's actions %+v (%v); want one, %q, via ui", id, acts, err, want)
				}
			}
			form.Set("step", "Charge")
			form.Set("newid", failedID+"-other")
			if code, page = post(form); code != http.StatusConflict || !strings.Contains(page, "did not journal") {
				t.Errorf("a fork from a step the run did not journal: %d; want 409 saying so\n%s", code, page)
			}
		})
	}
}
