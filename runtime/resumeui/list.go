package resumeui

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/resumegen/resumegen/internal/runops"
	"github.com/resumegen/resumegen/runtime/journal"
)

// statuses lists the run statuses in the order the list shows them.
var statuses = []journal.Status{
	journal.StatusNeedsAttention, journal.StatusFailed, journal.StatusWaiting, journal.StatusRunning,
	journal.StatusPending, journal.StatusSucceeded, journal.StatusCancelled,
}

// listPage is the runs list's template data.
type listPage struct {
	Query    listQuery
	Counts   []statusCount
	Total    int
	Runs     []listRow
	Next     string // the URL of the next page, "" on the last
	First    string // the URL of the first page, "" on it
	Err      string
	Statuses []journal.Status
	Session  sessionBar
}

// listQuery is the list's filter as the URL carries it.
type listQuery struct {
	Status, Workflow, Version, From, To, Q, Order, After string
}

type statusCount struct {
	Status journal.Status
	N      int
	URL    string
	On     bool
}

type listRow struct {
	RunID, URL, Workflow, Version, Status, StatusClass, Step, Created, Updated string
	Attempts                                                                   int
}

// timeLayouts are the forms a time filter is read in: what an
// <input type=datetime-local> sends, and RFC 3339.
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano, "2006-01-02"}

func parseTime(s string) (time.Time, error) {
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is neither YYYY-MM-DDTHH:MM (UTC) nor RFC 3339", s)
}

// filter reads the list's filter from the URL.
func (q listQuery) filter(limit int) (journal.RunFilter, error) {
	f := journal.RunFilter{Workflow: q.Workflow, Version: q.Version, IDContains: q.Q, Newest: q.Order != "oldest", Limit: limit}
	if q.Status != "" {
		s := journal.Status(q.Status)
		if !s.Known() {
			return f, fmt.Errorf("status %q is not a run status", q.Status)
		}
		f.Statuses = []journal.Status{s}
	}
	var err error
	if q.From != "" {
		if f.CreatedAfter, err = parseTime(q.From); err != nil {
			return f, err
		}
	}
	if q.To != "" {
		if f.CreatedBefore, err = parseTime(q.To); err != nil {
			return f, err
		}
	}
	if q.After != "" {
		if f.After, err = decodeCursor(q.After); err != nil {
			return f, err
		}
	}
	return f, nil
}

// encodeCursor and decodeCursor carry a page's cursor in the URL.
func encodeCursor(c *journal.RunCursor) string {
	return c.CreatedAt.UTC().Format(time.RFC3339Nano) + "~" + base64.RawURLEncoding.EncodeToString([]byte(c.RunID))
}

func decodeCursor(s string) (*journal.RunCursor, error) {
	t, id, ok := strings.Cut(s, "~")
	at, err := time.Parse(time.RFC3339Nano, t)
	raw, err2 := base64.RawURLEncoding.DecodeString(id)
	if !ok || err != nil || err2 != nil {
		return nil, fmt.Errorf("page cursor %q is not one this UI made", s)
	}
	return &journal.RunCursor{CreatedAt: at, RunID: string(raw)}, nil
}

// url is the list's URL for q, relative to the UI's root.
func (q listQuery) url() string {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "workflow": q.Workflow, "version": q.Version,
		"from": q.From, "to": q.To, "q": q.Q, "order": q.Order, "after": q.After} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if len(v) == 0 {
		return "./"
	}
	return "./?" + v.Encode()
}

func (u *ui) list(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := listQuery{Status: v.Get("status"), Workflow: v.Get("workflow"), Version: v.Get("version"),
		From: v.Get("from"), To: v.Get("to"), Q: v.Get("q"), Order: v.Get("order"), After: v.Get("after")}
	page := listPage{Query: q, Statuses: statuses, Session: u.sessionBar(r)}
	f, err := q.filter(u.opts.PageSize + 1)
	if err != nil {
		status(w, http.StatusBadRequest)
		page.Err = err.Error()
		render(w, "list.html", page)
		return
	}
	if err := u.fillList(r, &page, f); err != nil {
		status(w, http.StatusInternalServerError)
		page.Err = err.Error()
	}
	render(w, "list.html", page)
}

// fillList reads the counts and one page of runs (one more than a page,
// to know whether a next page exists).
func (u *ui) fillList(r *http.Request, page *listPage, f journal.RunFilter) error {
	counts, err := u.j.CountRuns(r.Context(), f)
	if err != nil {
		return err
	}
	q := page.Query
	for _, s := range statuses {
		cq := q
		cq.Status, cq.After = string(s), ""
		if q.Status == string(s) {
			cq.Status = ""
		}
		page.Counts = append(page.Counts, statusCount{Status: s, N: counts[s], URL: cq.url(), On: q.Status == string(s)})
		page.Total += counts[s]
	}
	runs, err := u.j.ListRuns(r.Context(), f)
	if err != nil {
		return err
	}
	if len(runs) > u.opts.PageSize {
		runs = runs[:u.opts.PageSize]
		nq := q
		nq.After = encodeCursor(runs[len(runs)-1].Cursor())
		page.Next = nq.url()
	}
	if q.After != "" {
		fq := q
		fq.After = ""
		page.First = fq.url()
	}
	for _, run := range runs {
		page.Runs = append(page.Runs, listRow{RunID: run.RunID, URL: runURL(run.RunID), Workflow: runops.ShortName(run.Workflow),
			Version: run.Version, Status: runops.StatusText(run), StatusClass: string(run.Status), Step: currentStep(run, nil),
			Created: stamp(run.CreatedAt), Updated: stamp(run.UpdatedAt), Attempts: run.Attempts})
	}
	return nil
}

// runURL is a run's page, relative to the UI's root.
func runURL(id string) string { return "run?" + url.Values{"id": {id}}.Encode() }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000")
}

// currentStep is the step a person must look at, or else the last
// journaled one.
func currentStep(r journal.RunRecord, steps []journal.StepRecord) string {
	return runops.CurrentStep(r, steps)
}
