// Package rolling holds the rolling-deploy test of issue 12: three
// versions of one workflow (command worker, built once per version with
// the build tags rolling_v1 and rolling_v2, none for v3), deployed over
// each other on PostgreSQL (four workers mixing versions, killed at random
// points) and on SQLite (one process per deploy). The test counts runs
// parked that could have continued, steps executed by a version the run
// was not pinned or moved to, and runs parked by v3's middle-step change;
// docs/reliability.md records the figures.
//
// Each version's generated file records the versions before it as its
// lineage (v2_resume.go: v1; v3_resume.go: v2, v1), which is what lets a
// newer worker take an older version's runs: the files were generated as
// one file's history would be, v2 over a copy of v1_resume.go and v3 over a
// copy of v2_resume.go. Regenerating a version over its own file keeps its
// lineage.
package rolling
