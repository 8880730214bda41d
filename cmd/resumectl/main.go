// Command resumectl is the operator's tool for resumegen's journal: it
// lists runs, shows one run's journal as a timeline, resolves a step that
// waits for a person, retries a failed run, cancels a run, accepts a new
// workflow version for a run stopped on a version change (one run, or
// every run a filter selects), and, before a deploy, says what the code
// would do with each unfinished run.
//
// Usage:
//
//	resumectl runs list [-status S[,S]] [-workflow W] [-version V] [-since DURATION] [-limit N] [-oldest]
//	resumectl runs show ID
//	resumectl runs watch ID [-interval D]
//	resumectl runs resolve ID STEP -done [-result JSON]
//	resumectl runs resolve ID STEP -redo
//	resumectl runs retry ID | FILTER
//	resumectl runs cancel ID | FILTER [-running]
//	resumectl runs accept-version ID [-to V] | FILTER -to V
//	resumectl runs signal ID NAME JSON [-unawaited]
//	resumectl runs fork ID -from STEP [-input JSON] [-id NEWID]
//	resumectl runs purge -older-than D [-workflow W] [-status S[,S]] [-dry-run | -yes]
//	resumectl check-deploy [packages]
//	resumectl schedules list
//	resumectl queues list
//	resumectl ui [-addr A] [-write] [-public -token-file FILE] [-allow-host NAME]
//	resumectl version
//	resumectl help [COMMAND]
//
// FILTER is any of -workflow W, -version V, -status S[,S], with -dry-run
// or -yes (see Bulk actions).
//
// Every command takes -db, a SQLite file, a postgres:// (postgresql://)
// URL or a key=value PostgreSQL DSN ("host=db user=app dbname=app"),
// defaulting to the RESUME_DB environment variable, and -json, which
// prints the command's result as JSON instead of aligned tables (complete
// records: the same fields for a step in runs show and runs watch). These
// flags, and -key-file and -unsealed (see Sealed journals), may come
// before the command (resumectl -db app.db runs list) or after it, before
// or after its arguments; given twice, the later wins. 'resumectl help',
// -h and 'resumectl COMMAND -h' print help on standard output (exit 0); a
// usage error prints what is wrong and the command's usage line on
// standard error (exit 2). resumectl version prints the module version it
// was built from and the generated code its runtime runs. Colour is used
// only when standard output is a terminal and NO_COLOR is not set. Every
// byte from the journal that reaches the terminal is escaped by one
// function (internal/termesc): C0 and C1 controls (ESC, so CSI and OSC
// sequences), DEL, the bidi overrides and isolates and bytes that are not
// UTF-8 show as \n, \u001b, \xff, ..., so that no run id or error can
// forge a row or drive the terminal; the only escape sequences written
// are resumectl's own colours. No message contains a database password.
//
// Every action that changes a run (resolve, retry, cancel,
// accept-version, signal; from here or from the web UI) is recorded in
// the journal (resume_actions) in the action's own transaction: which,
// with what detail, by whom (here the operating-system user), from where
// (here the host name), when. runs show lists them.
//
// resumectl never creates a journal: a SQLite path that does not exist is
// an error, and so is a database that holds no journal (exit status 2).
// runs list, runs show, runs watch, schedules list, check-deploy and
// -dry-run only read: they open the journal read-only and create, migrate or change
// nothing, on a read-only file or replica too. Values a codec sealed (resume.WithCodec)
// show as (encrypted).
//
// # Runs
//
// runs list shows, newest first (as the web UI; -oldest for oldest
// first, -limit N for at most N), each run's id, workflow (short name:
// package, dot, function), version, status, current step (the step waiting
// for a person, or the last journaled step), attempts (entries of a
// process into the run) and age. -status takes pending, running,
// succeeded, failed, needs_attention, cancelled or waiting,
// comma-separated (a waiting run's status says what it waits for and
// until when);
// -workflow matches the qualified name, the short name or the function
// name; -since keeps runs created within that duration.
//
// runs show prints the run and its journal as a timeline: step key,
// status, attempt, start, duration and a preview of the result or error.
// For a run stopped on a version change it prints the step-by-step diff
// between the run's version and the newest version of its workflow stored
// in the journal (each version's manifest is stored the first time a
// program running it meets the journal). It lists the run's moves between
// versions (from, to, by the engine or an operator, when, why) and prints
// the manifest of the run's version. Each step row says where the step is
// called in the code of the run's version (WHERE, "dir/file.go:42", from
// the definition the journal stores for the version; for a keyed or
// repeated step, the call site of its name). It lists the signals sent to
// the run that no await consumed yet (kept_signals in -json).
//
// runs watch follows a run live until it ends: it reads the run every
// -interval (250ms by default) and prints each step row that appears or
// changes and each change of the run's status (with -json, one JSON object
// a line). It exits 0 when the run succeeded, 1 when it failed, was
// cancelled or needs a person; a waiting run is followed on.
//
// runs resolve settles a once step whose outcome is unknown (the run is in
// needs_attention, the step in_flight): -done says it happened (the
// workflow continues with -result, JSON, as the step's result; null by
// default), -redo says it did not (it executes again, once). It is refused
// for a step that is not in_flight and for a run that is not waiting for a
// person (for instance one a worker holds).
//
// runs retry makes a failed run pending again and reopens, with a fresh
// retry budget, only the step whose failure ended it (runs show names it);
// failures the workflow handled replay, and a workflow that failed on its
// own executes no step again. It also makes pending again a run parked on
// a journal row that could not be used, once a person repaired the row
// (runs show marks such rows). runs show lists each step's failed attempts.
// runs fork starts a new run from run ID's journal up to step -from (a
// journal key, as runs show lists it): the steps journaled before it that
// succeeded or failed for good are copied and replay, -from and what
// follows execute in the new run, pinned to ID's version; -input replaces
// the run's input (the copied steps stay); the new run's id is -id, or
// ID~forkN. The copy, the new run and the fork's record on both runs
// commit together; the same -id again returns that run. A step the run did
// not journal is refused.
// runs cancel stops an unfinished run and its child runs (one a live
// worker is executing only with -running: the worker notices within a
// second, and cancels the context of the step executing): a run with
// nothing to unwind is cancelled at once, any other unwinds when a worker
// takes it, executing only the steps its workflow calls from defer (its
// compensations), and ends cancelled; runs
// accept-version moves a run stopped on a version change to the newest
// stored version of its workflow (or -to V; -version V is the same with a
// run id), pending, recording the move as the operator's. resumectl has
// none of the application's code, so it never executes a workflow: after
// resolve, retry or accept-version, a worker (Engine.Work) or the
// application (Engine.Resume, Engine.ResumeAll) resumes the run, replaying
// every journaled step whose key the code still has.
//
// runs signal sends the event NAME with the payload JSON to a run, as
// Engine.Signal does: its next await of NAME receives it (a run waiting
// for it is woken, pending), exactly once. It is refused for an unknown or
// finished run, for a NAME the run's version never awaits (a misspelt
// event, or one its child run awaits; -unawaited keeps it anyway, for a
// run that will move to a version that does), and for a payload that
// does not have the shape of what the run's version awaits under NAME.
//
// runs purge deletes old runs (retention; a program purges by itself with
// resume.WithRetention): the runs in -status (default succeeded, failed
// and cancelled; needs_attention only when named) that ended at least
// -older-than ago by the journal's clock (a duration, 36h, or days, 30d),
// of -workflow W if given, each with its child runs, steps and signals,
// -batch top-level runs per transaction. It never deletes a run that
// executes, a child run without its parent, a run with anything below it
// unfinished, a failed or parked run holding a signal no await consumed,
// nor a schedule's run of its last tick started or a later one. It counts
// first: -dry-run prints the count and changes nothing (it opens the
// journal read-only); otherwise it asks on the terminal unless -yes, as a
// bulk action does. The actions audit (resume_actions) is kept. A purged
// run's id is free again.
//
// # Sealed journals
//
// A journal a program seals (resume.WithCodec with resume.NewKeyring)
// records the ids of its keys (resume_keys). resumectl reads them when it
// opens the journal. Given the keys, -key-file FILE, else the file named
// by RESUME_KEY_FILE, else RESUME_KEYS holding them (ID:BASE64 entries,
// comma- or line-separated, the sealing key first, as resume.ParseKeys
// reads them), it shows the values it can open and seals what it writes
// (signal payloads, resolutions) as a worker would; runs show says
// "sealed: keys ...". Without them it shows sealed values as (encrypted)
// and refuses runs signal, runs resolve and ui -write: a plaintext value
// on a sealed journal is what the workers park as tampered. -unsealed
// writes it in plaintext anyway, with a warning (for workers that read
// with resume.ReadUnsealed).
//
// # Bulk actions
//
// runs retry, runs cancel and runs accept-version take, instead of a run
// id, a filter: -workflow W (as runs list), -version V (the runs' version),
// -status S (comma-separated), any of them. It selects only the runs the
// action applies to (retry: failed, or parked on an unusable journal row;
// cancel: unfinished; accept-version: stopped on a version change), and
// -status may name only those statuses. accept-version with a filter
// needs the version to accept, -to V. -dry-run prints how many runs the
// filter selects and the first ids, and changes nothing (it opens the
// journal read-only). Otherwise the command asks on the terminal
// ("accept version V2 for 37 run(s) of onboard.Onboard? [y/N]") unless -yes
// is given; with no terminal and no -yes it refuses, exit status 2. It
// acts run by run: each failure is reported on standard error with the
// run id and why, the other runs go on, and it ends with the counts, exit
// status 1 when any failed.
//
// # Deploys
//
// check-deploy loads the workflows of the packages (default ".") with the
// generator, writing nothing, and says for each unfinished run (pending,
// running, needs_attention, failed) what the code would do with it, by the
// rule of package runtime/deploy and the definitions stored in the
// journal: "continues" (its version is the code's, or an old version the
// code keeps with old-version-of=), "moves to V: why" (it continues on the
// code's version V), "would stop: why" (with the step diff), "waits for
// version V: no code here has it" (pinned to a version newer than the
// code's), or "stranded: workflow X is not in these packages" (with a
// hint: name= keeps a moved package's identity). For each old version the
// code keeps it counts the runs left, or says the function can be
// deleted. It exits 1 when any run would stop or is stranded, else 0:
//
//	resumectl check-deploy -db "$RESUME_DB" ./...
//
// # Schedules
//
// schedules list shows, by name, each schedule a program runs
// (resume.Engine.Schedule) as the journal stores it: its workflow, spec
// (a cron spec, or "every D"), policy for missed ticks (skip, or catch_up
// with its limit), the last tick started, the next tick, and the status of
// the last tick's run (NAME@TICK). Ticks are UTC, RFC 3339.
//
// # Queues
//
// queues list shows each queue (//resume:workflow queue=NAME) with stored
// limits or unfinished runs: its limits as the last worker configured
// them (resume.WithQueues), its depth (pending runs), runs executing and
// waiting, the distinct keys among those pending or running, the oldest
// pending run's creation and age, the starts within the rate's period,
// and the owner that configured it.
//
// # Web UI
//
// ui serves the web UI of package runtime/resumeui on -addr (default
// 127.0.0.1:8080; an address that is not loopback only with -public):
// the runs with counts, filters, search and paging, each run's journal
// as a timeline, and, with -write only, the actions of runs resolve,
// retry, cancel, accept-version and signal, each confirmed first and
// checked as here, and recorded with the signed-in user and the remote
// address. Without -write it opens the journal read-only.
//
// It answers only to loopback addresses and localhost, any port, the
// -addr address, and each -allow-host NAME: a request for another host
// (an attacker's page whose name resolves to 127.0.0.1) is refused before
// anything is read. -public requires authentication, and ui refuses to
// start without it: -token-file FILE (or RESUME_UI_TOKEN) holds a token
// or password of 16 bytes or more that a person types on the login form
// (the session cookie is HttpOnly, SameSite=Strict, Secure with
// -secure-cookie behind a TLS proxy, and lasts -session-ttl) or a script
// sends as Authorization: Bearer; behind a reverse proxy that signs
// people in, -proxy-header X-Forwarded-User is believed only on requests
// from a -trusted-proxy address or CIDR, and refused from any other.
//
// # Exit status
//
// 0: done. 1: refused, failed, not found, or the database cannot be
// reached, with one line on standard error naming what and why; a refused
// command changes nothing. check-deploy also exits 1 when a run would stop
// or is stranded; a bulk action when the action failed on a run, or the
// person did not confirm. 2: usage error, a database that holds no
// journal, or a bulk action with neither a terminal nor -yes.
//
// # Why a second binary
//
// resumegen runs on every go generate and stays free of database drivers
// (building the pure-Go SQLite driver takes a minute); resumectl links both
// journals and the generator library.
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
