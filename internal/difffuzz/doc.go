// Package difffuzz is resumegen's differential fuzzer: it generates
// random workflow programs, runs each uninterrupted and then crashed at
// every step boundary and resumed, and compares, within each policy, what
// the resumed runs did with what the uninterrupted run did.
//
// A program ([Generate]: seed and [Knobs] to program text, deterministic)
// is one package of a workflow Flow, its helpers, methods and child
// workflows, and its steps. Every construct is a knob ([Construct]):
// branches on step results, loops numbered by occurrence and loops with
// key=, helpers (nested, and methods), child workflows, failures handled
// with errors.Is, errors.As and errors.Join, retries in the body and
// retry=N, deferred compensation, several results, pointer
// out-parameters, nested step calls, resume.Sleep, the three policies,
// call-site directives (name=, key=, a policy), struct results (nested
// fields, slices, maps, pointers, time.Time), unhandled failures, and
// helpers of a second package of the module (lib, beside the program's
// package: its own steps, branches, loops, nested helpers, methods, child
// workflows, waits and call-site names, journaled through resumegen's
// shared copies), some reaching math/rand or time.Now there, which
// resumegen must refuse at that call with the path from the workflow
// (KindAccepted otherwise); and, on purpose, the constructs issue 18 reports as accepted without
// being understood ([Holes]). Each statement draws from a random stream
// of its own, so a knob turned off changes only what it governs and a
// failure shrinks knob by knob ([Shrink]).
//
// Steps derive their results from their inputs and a per-step seed, fail
// transiently (first attempts) or permanently (some inputs), and record
// each execution in an effects log (package fuzzrt: step, key, attempt,
// process; a tx step also writes a row in its transaction).
//
// [Batch] builds many programs in one temporary module whose path lies
// below this repository's (so that it may import fuzzrt), with a replace
// of resumegen by the checkout: one resumegen run (again without the
// refused programs), one go build, one test binary for all. A refusal
// with file:line:col diagnostics is a pass, recorded with the construct
// of the refused line; a crash of resumegen, a refusal whose message is a
// syntax error it made or asks for what the line has, and accepted code
// that does not compile are divergences. The test binary (fuzzrt.Drive)
// calls each workflow as a plain function, then crash-tests it with
// runtime/resumetest's CrashEverywhere (before, effect and after of every
// step, in process), and plays some cases again with real processes
// killed by SIGKILL through the runtime's fault injection, resuming them
// in new processes.
//
// [Compare] judges each program: the durable run computes what the plain
// function computes; every crash case ends as the uninterrupted run (its
// status, output, error text); a default step executes at least as often,
// and once more at most when the kill landed at its effect; a tx step's
// rows commit exactly as often; a once step never executes more often,
// and a kill at its effect parks the run for a person (resolved as done,
// the rest is compared too); every step runs under the name and policy
// the program means; and package resumetest's own checks (paths, counts)
// hold.
//
// TestDifferential replays every kept seed (testdata/seeds: a program
// that once failed, as text, so a later generator cannot lose it) and a
// few random programs: that is the short run of make test. The seeds of
// known holes are listed in knownDivergent with their issue; the test
// fails when one stops diverging, to be moved to the passing seeds. make
// fuzz runs the long budget (FUZZ_PROGRAMS=400, holes included, new
// failures shrunk and kept as seeds). A seed for a new construct is found
// by generating Knobs{Size: 1, Depth: 1, Use: []Construct{c}} over seeds
// until the program uses c, and written with [WriteSeed].
package difffuzz
