// Package rolling holds the rolling-deploy test of issue 12: three
// versions of one workflow (command worker, built once per version with
// the build tags rolling_v1 and rolling_v2, none for v3), deployed over
// each other on PostgreSQL (four workers mixing versions, killed at random
// points) and on SQLite (one process per deploy). The test counts runs
// parked that could have continued, steps executed by a version the run
// was not pinned or moved to, and runs parked by v3's middle-step change;
// docs/reliability.md records the figures.
package rolling
