# The two commands a newcomer needs: `make demo` and `make test`.
GO ?= go
# WITH_POSTGRES runs a command beside a throwaway PostgreSQL server, for the
# PostgreSQL journal's tests and benchmarks (they skip without one, unless
# RESUME_REQUIRE_POSTGRES=1).
WITH_POSTGRES ?= scripts/with-postgres.sh
# WITH_PGBOUNCER, inside WITH_POSTGRES, puts a throwaway PgBouncer in
# transaction pooling mode in front of that server, so that the PostgreSQL
# journal's conformance suite runs a second time through a pooler (its
# tests skip without pgbouncer, unless RESUME_REQUIRE_PGBOUNCER=1).
WITH_PGBOUNCER ?= scripts/with-pgbouncer.sh

.PHONY: demo test deps generate check bench fuzz

# demo narrates a workflow killed with SIGKILL and resumed, once per step
# guarantee, and checks that nothing ran more often than promised.
demo:
	$(GO) run ./examples/onboard

# test vets the code (the runtime also for Windows, where it must build
# without Unix signals), proves every generated file is fresh, and runs all
# tests (golden files that compile, the journal conformance suite, the
# crash matrix with real processes). The tests run beside a throwaway
# PostgreSQL server, for the PostgreSQL journal, and a PgBouncer in front
# of it. It says first, and again at the end, which of PostgreSQL, Chromium
# and PgBouncer are missing (the tests that need them skip) and how to
# install them.
test:
	@scripts/check-deps.sh
	$(GO) vet ./...
	GOOS=windows GOARCH=amd64 $(GO) vet ./runtime/resume
	$(GO) tool resumegen -check ./...
	$(WITH_POSTGRES) $(WITH_PGBOUNCER) $(GO) test -count=1 ./...
	@scripts/check-deps.sh

# deps says which programs the tests need are missing, and how to install
# them.
deps:
	@scripts/check-deps.sh

# generate regenerates every *_resume.go file.
generate:
	$(GO) generate ./...

# check exits 1, printing a diff, when a generated file is stale.
check:
	$(GO) tool resumegen -check ./...

# bench runs the runtime benchmarks (the step benchmarks also through a
# PgBouncer in transaction mode; the waiting ones, whose op is a
# batch of runs or seconds of an idle worker, with their own counts), and
# resumegen against go vet on a
# package of 50 workflows x 20 steps; docs/benchmarks.md records them.
# Set RESUME_BENCH_DIR to put the databases on the disk you care about (the
# PostgreSQL server of the benchmarks lives in /tmp).
bench:
	$(WITH_POSTGRES) $(WITH_PGBOUNCER) $(GO) test -run '^$$' -bench . -skip 'IdleWaiting|ClaimIdle|Latency|WakeStorm|QueueDrain' -benchtime 500x -count 5 ./runtime/...
	$(WITH_POSTGRES) $(GO) test -run '^$$' -bench 'IdleWaiting|Latency' -benchtime 1x -count 3 ./runtime/...
	$(WITH_POSTGRES) $(GO) test -run '^$$' -bench ClaimIdle -benchtime 300x -count 3 ./runtime/...
	$(WITH_POSTGRES) $(GO) test -run '^$$' -bench 'WakeStorm|QueueDrain' -benchtime 1x -count 2 -timeout 60m ./runtime/...
	$(GO) test -run '^$$' -bench GenerateVsVet -benchtime 5x -count 5 ./cmd/resumegen/

# fuzz runs the differential fuzzer's long budget (internal/difffuzz):
# FUZZ_PROGRAMS random workflow programs, issue 18's holes included, each
# run uninterrupted, crashed at every step boundary in process and killed
# with SIGKILL in real processes, and compared within each policy. It prints
# programs, crash cases, refusals, divergences and duplicate effects; a new
# failure is shrunk and kept as a seed in internal/difffuzz/testdata/seeds.
# Minutes to an hour (400 programs: about half an hour on 2 cores).
FUZZ_PROGRAMS ?= 400
FUZZ_SEED ?= $(shell date +%s)
fuzz:
	FUZZ_PROGRAMS=$(FUZZ_PROGRAMS) FUZZ_SEED=$(FUZZ_SEED) FUZZ_KILLS=3 FUZZ_HOLES=1 FUZZ_SHRINK=8 FUZZ_KEEP=1 \
		FUZZ_REPORT=$${FUZZ_REPORT:-$${TMPDIR:-/tmp}/difffuzz-report.txt} \
		$(GO) test -count=1 -timeout 4h -run '^TestDifferential$$' -v ./internal/difffuzz/
