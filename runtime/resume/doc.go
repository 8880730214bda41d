// Package resume is the runtime of resumegen: it runs workflows whose step
// calls were routed through a journal by the generator, so that a run that
// died at step nine continues at step nine instead of repeating steps one to
// eight.
//
// A user never calls the generated code directly. The generated file
// registers each workflow under the original function, and the user starts
// it through an [Engine]:
//
//	journal, err := sqlitejournal.Open(ctx, "runs.db")
//	...
//	engine := resume.NewEngine(journal)
//	summary, err := resume.Run(ctx, engine, "onboard-42", Onboard, input)
//
// Starting an existing run id never starts a second run: a finished run
// returns its journaled outcome and an unfinished one is resumed.
//
// # Journal
//
// Each run is a row of resume_runs and each executed step a row of
// resume_steps, keyed by the step's name and occurrence ("NotifyOwner",
// "NotifyOwner#2", ...), never by its position. A run is pinned to the
// version the generator derived from its step signature list. A program
// that keeps that version (old-version-of=) executes it there; otherwise
// the run continues on the program's version only if the steps it
// journaled are an unchanged prefix of it (the run is moved, and the move
// recorded), and parks in [StatusNeedsAttention] with the step that
// differs before anything executes.
//
// # Step guarantees
//
//   - Default (at least once): the step executes, then its result is
//     journaled in one write. A crash between the two repeats that one step;
//     [IdempotencyKey] gives the step a key that is stable across attempts and
//     resumes, for providers that deduplicate.
//   - tx (exactly once): the step runs inside a transaction of the journal's
//     own database, reached with [Tx], and its journal row commits in that
//     same transaction.
//   - once (at most once): an in_flight row commits before the step runs. A
//     resume that meets it executes nothing and parks the run for a person,
//     who resolves it with [Engine.Resolve].
//
// Retries happen inside a step: bounded attempts, exponential backoff with
// full jitter, context-aware, with errors marked [Permanent] never retried.
//
// # Replay
//
// The outcome the body received from a step is history. A success replays
// its journaled result; a failure the body received (permanent, or with its
// budget spent) replays too, without executing: the value returned beside
// the error, and the error with its text, its permanent mark and the
// identities [WorkflowDef.Errors] lists. A step whose retries a crash cut
// short carries on with the attempts it had left; every failed attempt is
// in the row's history. Only [Engine.Retry] executes a failure again, and
// only the one the run ended with. A result JSON cannot carry (NaN, ±Inf,
// invalid UTF-8) fails the attempt, or parks the run when the step is once;
// a journaled result that does not decode, or is null where the step's type
// needs a value, parks the run as a corrupt journal: it is never replayed
// as a zero value. So does any row the journal cannot read as stored (a
// column of the wrong type, a status that is no status, an input that is
// not the workflow's): the run parks naming the row, the other runs go
// on, and [Engine.Retry] takes it up again once a person repaired the row.
//
// # Faults
//
// A panic in a step's code is that attempt's failure, a [PanicError] with
// the panic value and stack, journaled and retried per the step's policy
// (a tx step's transaction rolled back); in a once step, whose effect may
// have happened, it parks the run for a person instead. A panic in the
// workflow body fails the run. No panic of a run ends the process. A run
// whose process keeps dying (killed, out of memory, os.Exit) without
// journaling anything is failed as a crash loop ([WithCrashLoopLimit]). A
// journal write that records what already happened is retried with
// backoff while the run's lease holds, so a short database outage neither
// parks a run nor repeats a step.
//
// # Generated code
//
// Names documented "for generated code only" are the contract between
// resumegen's output and this package; a program never uses them itself.
// The functions ([Call], [CallKey], [Call0], [Call0Key], [CallChild] and
// its variants, [Unwind], [Register], [Receiver], [ReceiverType],
// [ErrorSentinel], [ErrorType]) are all in generated.go; the types they take
// ([WorkflowDef], [StepDef], [Args], [ErrorDef]) live beside their methods.
// Their shape may change between versions in step with the generator;
// [SupportPackageIsVersion5] makes a skew between the two fail at compile
// time. Generated code embeds the source it copied ([Source]): a body
// edited without go generate is refused when a run of it would start or
// execute ([ErrStale]).
//
// # Journals
//
// The contract between the engine and a journal (the rows it stores, the
// claims and leases the engine asks of it, its optional interfaces) is
// package github.com/resumegen/resumegen/runtime/journal, for journal
// implementers and tools that read a journal's rows. This package
// re-exports, as the same types and values, what a program touches:
// [Journal], [Status], [Resolution], [CancelOptions], the AttentionKind
// constants and the journal errors its operations return.
package resume
