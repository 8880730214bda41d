#!/usr/bin/env bash
# check-deps.sh says, loudly, which of the programs the tests need are
# missing on this machine, and how to install each: the tests that need
# one skip without it (CI makes those skips failures). It exits 0: the
# rest of the tests still run.
set -uo pipefail

missing=0
warn() {
	missing=1
	printf '\n*** make test: %s\n***   %s\n' "$1" "$2" >&2
}

pg=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$pg" ] || [ ! -x "$pg/initdb" ]; then
	if ! command -v pg_ctl >/dev/null 2>&1; then
		warn "no PostgreSQL found: the PostgreSQL journal's tests will SKIP" "install it: apt-get install postgresql-15 (or set PG_BIN to the folder of initdb)"
	fi
fi
if [ -z "${RESUME_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 &&
	! command -v google-chrome >/dev/null 2>&1 && ! command -v headless-shell >/dev/null 2>&1; then
	warn "no Chromium found: the web UI's browser tests will SKIP" "install it: apt-get install chromium (or set RESUME_CHROMIUM to the browser)"
fi
# with-pgbouncer.sh also finds Debian's /usr/sbin/pgbouncer off PATH.
if [ -z "${PGBOUNCER:-}" ] && ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
	warn "no PgBouncer found: the tests of the journal behind a pooler will SKIP" "install it: apt-get install pgbouncer"
fi
if [ "$missing" = 0 ]; then
	echo "make test: PostgreSQL, Chromium and PgBouncer found: no test skips for want of them" >&2
fi
exit 0
