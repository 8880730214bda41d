#!/usr/bin/env bash
# with-postgres.sh CMD... runs CMD with a throwaway PostgreSQL server and
# RESUME_TEST_POSTGRES_DSN pointing at it, then stops the server and removes
# its files, whatever CMD did. It exits with CMD's status.
#
# The server listens on a UNIX socket in a temporary folder only (no TCP),
# with fsync on, so benchmarks measure durable commits. It runs as the
# "postgres" system user when invoked as root (initdb refuses root).
#
# PG_BIN names the folder of initdb and pg_ctl; by default the newest
# /usr/lib/postgresql/*/bin. Without PostgreSQL binaries, CMD runs without a
# server (the PostgreSQL tests skip), unless RESUME_REQUIRE_POSTGRES=1, which
# makes that an error.
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: $0 CMD..." >&2
	exit 2
fi

find_bin() {
	if [ -n "${PG_BIN:-}" ]; then
		echo "$PG_BIN"
		return
	fi
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -z "$d" ] && command -v pg_ctl >/dev/null 2>&1; then
		d=$(dirname "$(command -v pg_ctl)")
	fi
	echo "$d"
}

bin=$(find_bin)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
	if [ "${RESUME_REQUIRE_POSTGRES:-}" = 1 ]; then
		echo "with-postgres.sh: RESUME_REQUIRE_POSTGRES=1 but no PostgreSQL binaries found (set PG_BIN, or apt-get install postgresql-15)" >&2
		exit 1
	fi
	echo "with-postgres.sh: no PostgreSQL binaries found; running without PostgreSQL (its tests skip)" >&2
	exec "$@"
fi

# Run server commands as the postgres user when we are root.
as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# A short path: a socket path must fit in about 100 bytes.
tmp=$(mktemp -d /tmp/rpg.XXXXXX)
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$tmp"
fi
chmod 700 "$tmp"
if [ "$(stat -f -c %T "$tmp")" = tmpfs ]; then
	echo "with-postgres.sh: note: $tmp is on tmpfs, so fsync costs nothing; benchmarks will flatter commits" >&2
fi

started=
cleanup() {
	local status=$?
	if [ -n "$started" ]; then
		as_pg "$bin/pg_ctl" -D "$tmp/data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

as_pg "$bin/initdb" -D "$tmp/data" -U postgres -A trust -E UTF8 --no-locale >"$tmp/initdb.log" 2>&1 || {
	cat "$tmp/initdb.log" >&2
	echo "with-postgres.sh: initdb failed" >&2
	exit 1
}
started=1
as_pg "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 \
	-o "-c listen_addresses='' -c unix_socket_directories='$tmp' -c fsync=on -c synchronous_commit=on -c max_connections=200" \
	start >/dev/null || {
	cat "$tmp/server.log" >&2
	echo "with-postgres.sh: the server did not start" >&2
	exit 1
}
# pg_ctl -w returns once the server accepts connections; pg_isready, when
# present, double-checks the socket.
if [ -x "$bin/pg_isready" ]; then
	for _ in $(seq 1 50); do
		"$bin/pg_isready" -q -h "$tmp" -U postgres && break
		sleep 0.1
	done
fi

export RESUME_TEST_POSTGRES_DSN="postgres://postgres@/postgres?host=$tmp&sslmode=disable"
echo "with-postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on $tmp" >&2
set +e
"$@"
status=$?
set -e
exit "$status"
