package pgjournal

import (
	"context"

	"github.com/resumegen/resumegen/runtime/journal"
)

// appendMove is resume_runs.moves with the move in $4 (JSON) appended,
// stamped with the server's clock (see dialect.AppendMove).
const appendMove = `COALESCE(moves, '[]'::jsonb) || jsonb_build_array(jsonb_set($4::jsonb, '{at}', to_jsonb(clock_timestamp())))`

// claimableVersions lists, for a claim with versions ($5 workflows, $6
// versions, paired), the versions whose runs the worker may take: its
// own, and those its versions descend from by the code's lineage ($8
// workflows, $9 versions, paired: ClaimNextRequest.Older) that no worker
// advertised within $7. It is computed once per claim, not per candidate
// run. The manifests' seq, the order in which the journal first saw
// versions, plays no part: a newer program may have met the journal
// first.
//
// The lists are unnested from a subquery that is not pulled up (OFFSET
// 0), not from the parameters themselves: given the arrays as constants,
// a custom plan counts their elements, and with few versions it always
// looks cheaper than the generic plan, so the server would plan the
// statement anew at every claim (about a millisecond, as much as the
// claim itself: BenchmarkClaimNext). Unnested from a column, both plans
// assume the same count, and the prepared statement keeps its generic
// plan after five executions.
const claimableVersions = `WITH lists AS (SELECT $5::text[] AS mw, $6::text[] AS mv, $8::text[] AS ow, $9::text[] AS ov OFFSET 0),
	mine AS (SELECT m.* FROM lists, unnest(lists.mw, lists.mv) AS m (workflow, version)),
	older AS (SELECT o.* FROM lists, unnest(lists.ow, lists.ov) AS o (workflow, version)),
	claimable AS (
		SELECT workflow, version FROM mine
		UNION
		SELECT older.workflow, older.version FROM older
		WHERE NOT EXISTS (SELECT 1 FROM {schema}.resume_workers w
				WHERE w.workflow = older.workflow AND w.version = older.version AND w.seen_at >= clock_timestamp() - $7::interval))
`

// splitVersions returns the workflows and versions of vs as two lists, for
// unnest.
func splitVersions(vs []journal.WorkflowVersion) (workflows, versions []string) {
	for _, v := range vs {
		workflows, versions = append(workflows, v.Workflow), append(versions, v.Version)
	}
	return workflows, versions
}

// SaveManifest stores a version's manifest the first time it is seen,
// with the next seq, under an advisory lock so that concurrent saves get
// distinct ones; a stored row without a definition gets m's.
func (j *Journal) SaveManifest(ctx context.Context, m journal.ManifestRecord) error {
	return j.store.SaveManifest(ctx, m)
}

// LoadManifest returns a stored manifest row; found is false when the
// version is unknown.
func (j *Journal) LoadManifest(ctx context.Context, workflow, version string) (journal.ManifestRecord, bool, error) {
	return j.store.LoadManifest(ctx, workflow, version)
}

// ListManifests returns a workflow's stored manifests, newest (highest
// seq) first.
func (j *Journal) ListManifests(ctx context.Context, workflow string) ([]journal.ManifestRecord, error) {
	return j.store.ListManifests(ctx, workflow)
}

// Advertise replaces the versions owner advertised with versions, seen at
// the server's clock; nil withdraws them.
func (j *Journal) Advertise(ctx context.Context, owner string, versions []journal.WorkflowVersion) error {
	return j.store.Advertise(ctx, owner, versions)
}

// MoveRun re-pins the run l holds to m.To and m.Workflow, relabels its step
// rows by m.Renames and appends m, stamped with the server's clock, to its
// moves, in one transaction holding the run's row: nothing is written
// unless l is still the run's.
func (j *Journal) MoveRun(ctx context.Context, l journal.Lease, m journal.Move) error {
	return j.store.MoveRun(ctx, l, m)
}
