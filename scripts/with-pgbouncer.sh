#!/usr/bin/env bash
# with-pgbouncer.sh CMD... runs CMD with a throwaway PgBouncer in front of
# the PostgreSQL server that RESUME_TEST_POSTGRES_DSN names (run it inside
# scripts/with-postgres.sh, which does so when pgbouncer is installed), and
# RESUME_TEST_PGBOUNCER_DSN pointing at it, then stops PgBouncer and removes
# its files, whatever CMD did. It exits with CMD's status.
#
# PgBouncer runs in transaction pooling mode (pool_mode = transaction: a
# client holds a server connection only for one transaction, as the pooled
# URLs of Neon, Supabase and most managed services do), reachable only
# through a UNIX socket in a private temporary folder (loopback only: no
# TCP), with trust authentication to the server's own socket. It runs as
# the "postgres" system user when invoked as root (pgbouncer refuses root).
#
# PGBOUNCER names the pgbouncer binary; by default the one on PATH or
# /usr/sbin/pgbouncer (Debian's package "pgbouncer"). Without it, or without
# RESUME_TEST_POSTGRES_DSN, CMD runs without a pooler (the PgBouncer tests
# skip), unless RESUME_REQUIRE_PGBOUNCER=1, which makes that an error.
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: $0 CMD..." >&2
	exit 2
fi

missing() {
	if [ "${RESUME_REQUIRE_PGBOUNCER:-}" = 1 ]; then
		echo "with-pgbouncer.sh: RESUME_REQUIRE_PGBOUNCER=1 but $1" >&2
		exit 1
	fi
	echo "with-pgbouncer.sh: $1; running without PgBouncer (its tests skip)" >&2
	exec "$@"
}

bin=${PGBOUNCER:-}
if [ -z "$bin" ]; then
	bin=$(command -v pgbouncer 2>/dev/null || true)
	if [ -z "$bin" ] && [ -x /usr/sbin/pgbouncer ]; then
		bin=/usr/sbin/pgbouncer
	fi
fi
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
	missing "no pgbouncer binary found (set PGBOUNCER, or apt-get install pgbouncer)" "$@"
fi
dsn=${RESUME_TEST_POSTGRES_DSN:-}
if [ -z "$dsn" ]; then
	missing "RESUME_TEST_POSTGRES_DSN is not set (run inside scripts/with-postgres.sh)" "$@"
fi
# The server's socket folder, from the DSN with-postgres.sh exports
# (postgres://postgres@/postgres?host=/tmp/rpg.XXXXXX&sslmode=disable).
pghost=$(sed -n 's/.*[?&]host=\([^&]*\).*/\1/p' <<<"$dsn")
if [ -z "$pghost" ]; then
	missing "RESUME_TEST_POSTGRES_DSN names no socket folder (host=...): $dsn" "$@"
fi

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

tmp=$(mktemp -d /tmp/rpgb.XXXXXX)
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$tmp"
fi
chmod 700 "$tmp"

# 6432 only names the socket file (.s.PGSQL.6432) in the private folder:
# nothing listens on TCP.
port=6432
cat >"$tmp/pgbouncer.ini" <<EOF
[databases]
* = host=$pghost port=5432

[pgbouncer]
listen_addr =
listen_port = $port
unix_socket_dir = $tmp
unix_socket_mode = 0700
auth_type = trust
auth_file = $tmp/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 60
max_db_connections = 150
server_lifetime = 3600
server_idle_timeout = 60
logfile = $tmp/pgbouncer.log
pidfile = $tmp/pgbouncer.pid
EOF
printf '"postgres" ""\n' >"$tmp/userlist.txt"
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$tmp/pgbouncer.ini" "$tmp/userlist.txt"
fi

started=
cleanup() {
	local status=$?
	if [ -n "$started" ] && [ -f "$tmp/pgbouncer.pid" ]; then
		kill "$(cat "$tmp/pgbouncer.pid")" 2>/dev/null || true
		for _ in $(seq 1 50); do
			[ -f "$tmp/pgbouncer.pid" ] || break
			sleep 0.1
		done
	fi
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

started=1
as_pg "$bin" -d -q "$tmp/pgbouncer.ini" || {
	cat "$tmp/pgbouncer.log" >&2 2>/dev/null || true
	echo "with-pgbouncer.sh: pgbouncer did not start" >&2
	exit 1
}
for _ in $(seq 1 50); do
	[ -S "$tmp/.s.PGSQL.$port" ] && break
	sleep 0.1
done
if [ ! -S "$tmp/.s.PGSQL.$port" ]; then
	cat "$tmp/pgbouncer.log" >&2 2>/dev/null || true
	echo "with-pgbouncer.sh: pgbouncer's socket did not appear" >&2
	exit 1
fi

export RESUME_TEST_PGBOUNCER_DSN="postgres://postgres@/postgres?host=$tmp&port=$port&sslmode=disable"
echo "with-pgbouncer.sh: $("$bin" --version | head -n 1) on $tmp, pool_mode = transaction" >&2
set +e
"$@"
status=$?
set -e
exit "$status"
