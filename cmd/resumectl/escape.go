package main

import (
	"encoding/json"

	"github.com/resumegen/resumegen/internal/termesc"
	"github.com/resumegen/resumegen/runtime/journal"
)

// Run ids, step keys, versions, errors and results come from the journal,
// and so, ultimately, from whoever chose a run's id or a step's error.
// Every value printed is escaped by one function, termesc.String (esc),
// table cells by the table; everything resumectl writes passes through a
// termesc.Writer, which lets only newlines, tabs and resumectl's own
// colours (asked for with paint) through.

// esc is termesc.String: s with every control character escaped, newlines
// and tabs included: one value, one cell, one line.
func esc(s string) string { return termesc.String(s) }

// escRun escapes the values of r that show's free text prints outside
// tables (tables escape their cells).
func escRun(r journal.RunRecord) journal.RunRecord {
	r.RunID, r.Workflow, r.Version, r.AttentionStep, r.FailedStep, r.LeaseOwner, r.Parent =
		esc(r.RunID), esc(r.Workflow), esc(r.Version), esc(r.AttentionStep), esc(r.FailedStep), esc(r.LeaseOwner), esc(r.Parent)
	r.ContinuedFrom, r.ContinuedAs = esc(r.ContinuedFrom), esc(r.ContinuedAs)
	return r
}

// escVersionChange escapes what show prints of a version change.
func escVersionChange(vc *versionChange) *versionChange {
	if vc == nil {
		return nil
	}
	v := *vc
	v.Workflow, v.From, v.To, v.Note = esc(v.Workflow), esc(v.From), esc(v.To), esc(v.Note)
	return &v
}

// escDeploy escapes what check-deploy prints outside its table.
func escDeploy(out deployJSON) deployJSON {
	diffs := make([]deployDiff, len(out.Diffs))
	for i, d := range out.Diffs {
		d.Workflow, d.From, d.To = esc(d.Workflow), esc(d.From), esc(d.To)
		runs := make([]string, len(d.Runs))
		for k, r := range d.Runs {
			runs[k] = esc(r)
		}
		d.Runs = runs
		diffs[i] = d
	}
	out.Diffs = diffs
	old := make([]oldVersion, len(out.Old))
	for i, ov := range out.Old {
		ov.Workflow, ov.Version, ov.Func = esc(ov.Workflow), esc(ov.Version), esc(ov.Func)
		old[i] = ov
	}
	out.Old = old
	hints := map[string]string{}
	for w, h := range out.Hints {
		hints[esc(w)] = esc(h)
	}
	out.Hints = hints
	return out
}

// encrypted stands for a value a codec sealed (resume.WithCodec):
// resumectl has no key.
const encrypted = "(encrypted)"

// forDisplay prepares show's human form: free-text values escaped, and
// sealed values shown as (encrypted).
func forDisplay(r journal.RunRecord, out showJSON) (journal.RunRecord, showJSON) {
	r, out.VersionChange = escRun(r), escVersionChange(out.VersionChange)
	if journal.IsSealed(r.Input) {
		r.Input = json.RawMessage(encrypted)
	}
	if journal.IsSealed(r.Output) {
		r.Output = json.RawMessage(encrypted)
	}
	if journal.IsSealed([]byte(r.Error)) {
		r.Error = encrypted
	}
	steps := make([]stepJSON, len(out.Steps))
	for i, s := range out.Steps {
		if journal.IsSealed(s.Result) {
			s.Result = json.RawMessage(encrypted)
		}
		if journal.IsSealed([]byte(s.Error)) {
			s.Error = encrypted
		}
		if len(s.Attempts) > 0 {
			as := make([]attemptJSON, len(s.Attempts))
			for k, a := range s.Attempts {
				if journal.IsSealed([]byte(a.Error)) {
					a.Error = encrypted
				}
				as[k] = a
			}
			s.Attempts = as
		}
		steps[i] = s
	}
	out.Steps = steps
	return r, out
}
