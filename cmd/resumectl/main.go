// Command resumectl is the operator's tool for resumegen's journal: it
// lists runs, shows one run's journal as a timeline, resolves a step that
// waits for a person, retries a failed run, cancels a run, accepts a new
// workflow version for a run stopped on a version change, and, before a
// deploy, checks whether the code would stop any unfinished run.
//
// Usage:
//
//	resumectl runs list [-status S[,S]] [-workflow W] [-version V] [-since DURATION]
//	resumectl runs show ID
//	resumectl runs resolve ID STEP -done [-result JSON]
//	resumectl runs resolve ID STEP -redo
//	resumectl runs retry ID
//	resumectl runs cancel ID [-running]
//	resumectl runs accept-version ID [-version V]
//	resumectl runs signal ID NAME JSON
//	resumectl check-deploy [packages]
//	resumectl schedules list
//
// Every command takes -db, a SQLite file, a postgres:// (postgresql://)
// URL or a key=value PostgreSQL DSN ("host=db user=app dbname=app"),
// defaulting to the RESUME_DB environment variable, and -json, which
// prints the command's result as JSON instead of aligned tables. Flags may
// come before or after the arguments. Colour is used only when standard
// output is a terminal and NO_COLOR is not set. Control characters in
// every value printed are escaped (\n, \u001b, ...), so that no run id or
// error can forge a row or drive the terminal. No message contains a
// database password.
//
// resumectl never creates a journal: a SQLite path that does not exist is
// an error, and so is a database that holds no journal (exit status 2).
// runs list, runs show, schedules list and check-deploy only read: they open the journal
// read-only and create, migrate or change nothing, on a read-only file or
// replica too. Values a codec sealed (resume.WithCodec) show as
// (encrypted).
//
// # Runs
//
// runs list shows, oldest first, each run's id, workflow (short name:
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
// program running it meets the journal).
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
// runs cancel marks an unfinished run cancelled (one a
// live worker is executing only with -running: the worker stops at its
// next step, and a step executing at that moment may still complete); runs
// accept-version moves a run stopped on a version change to the newest
// stored version of its workflow (or -version V), pending. resumectl has
// none of the application's code, so it never executes a workflow: after
// resolve, retry or accept-version, a worker (Engine.Work) or the
// application (Engine.Resume, Engine.ResumeAll) resumes the run, replaying
// every journaled step whose key the code still has.
//
// runs signal sends the event NAME with the payload JSON to a run, as
// Engine.Signal does: its next await of NAME receives it (a run waiting
// for it is woken, pending), exactly once. It is refused for an unknown or
// finished run, and for a payload that does not have the shape of what
// the run's version awaits under NAME.
//
// # Deploys
//
// check-deploy loads the workflows of the packages (default ".") with the
// generator, writing nothing, and compares the version of each unfinished
// run (pending, running, needs_attention, failed) with the code's version
// of its workflow. It exits 1, listing the runs and the step diff between
// the run's stored manifest and the code's steps, when any run would stop
// on a version change after the deploy, and 0 when none would:
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
// # Exit status
//
// 0: done. 1: refused, failed, not found, or the database cannot be
// reached, with one line on standard error naming what and why; a refused
// command changes nothing. check-deploy also exits 1 when a run would stop.
// 2: usage error, or a database that holds no journal.
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
