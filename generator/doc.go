// Package generator is resumegen's code generator: it turns Go functions
// marked //resume:workflow into durable workflows whose step calls go
// through the journal of package github.com/resumegen/resumegen/runtime/resume.
//
// # Pipeline
//
// [Generate] is the front door of a pipeline of stages, each a package of
// generator/internal with one job; a stage reads what the earlier ones
// produced and imports no later one (stages_test.go checks the graph):
//
//   - load: one go list for all patterns and their dependencies (files,
//     import graph, no types). Each named package's files are searched
//     for the bytes "resume:" (a directive, or a near miss of one); only
//     packages holding them are type-checked: a tree without workflows
//     costs a go list and a read. Those packages, every package of the
//     main module they import (directly or not; the runtime's packages
//     aside), and every package on an import path between two of them,
//     are parsed and type-checked there, in dependency order: the later
//     stages follow calls into the main module's packages by types (the
//     Module of package load). What else they import (the standard
//     library, other modules) comes from export data (one more go list),
//     so each package has one identity. Asking go/packages for their
//     types directly would run go list -export, which compiles the named
//     packages just edited (seconds for a large one) to throw the result
//     away. A named package holding only generated files has them
//     deleted as stale without a type check (unless one holds shared
//     copies, see Helpers). Our own generated files (name ending
//     _resume.go, first line the generated header) are parsed as empty
//     files of their package, so a stale or broken generated file never
//     blocks regeneration; code that names what generated code declares
//     for it (a workflow's run handle) is not an error there. The
//     workflow definitions they record are read, without types, as plain
//     data (load.Prior: identity, version, lineage, steps), the history
//     the model needs (see Lineage). Tests are
//     not loaded: generating x_resume_test.go for a workflow in x_test.go
//     would mean go list -test and type-checking every package's tests
//     and their imports on every run. Instead each package directory's
//     _test.go files holding //resume:workflow are parsed without types,
//     and each such workflow is refused at its directive: it is never
//     silently skipped. Under go vet, whose analyzer is given export data
//     only, the analyzer of a package declaring workflows parses and
//     type-checks the main module's packages it imports the same way
//     (load.ForVet).
//   - directive: the //resume: directives, read from FuncDecl.Doc.List
//     (Doc.Text drops them). //resume:workflow marks a function;
//     //resume:step [options] marks a function, method or interface method
//     declaration, or, as a trailing comment, one call inside a function
//     body (see Call-site directives), of every package read from source;
//     the sets are linked, so a callee of another such package has its
//     directive from there. A callee of another module (loaded from export
//     data, without syntax) has its directive read by parsing just its
//     declaring file, found through the object's position. This stage
//     reports what does not parse, what is attached to nothing, near
//     misses, and lines whose call a reader could not tell.
//   - calls: the call graph of the functions of every package read from
//     source, by types: which reach a journaled call (a step, a child
//     workflow, a wait). What a function of another module may reach is
//     read from its source by name, erring towards refusal.
//   - model: plain data every later stage reads and none writes. It walks
//     each workflow's body in source order and the helpers it calls, and
//     records each journaled call with where it stands (in a goroutine, a
//     closure, a select, a map range, a deferred call), the helpers to
//     copy, every function entered, the error tests of the bodies, the
//     JSON shapes of what is journaled, the version, the identity in the
//     journal, the lineage (the versions it descends from, read from the
//     generated files) and the names of what the generated code declares.
//     Methods
//     promoted through embedding and interface methods are steps like any
//     method; a call of a generic function or of a method of a generic
//     type is a step of its instantiation: the instantiated types enter
//     the signature and the version, and the wrapper, not generic, calls
//     F[T1, T2] explicitly.
//   - check: a list of named checks (check.All), each one function over
//     the models with its test beside it, reporting every problem with its
//     position in one pass: malformed directives aside, bad workflow
//     signatures, steps whose error is not their last result, journaled
//     values JSON cannot round-trip (results, the run's input and output,
//     pointees a step writes through, await payloads, error types;
//     parameters are not journaled and may be of any type), pointer
//     parameters and call-site receivers whose state may hold a result
//     JSON cannot carry, journaled calls whose order the journal cannot
//     reproduce (go, select, function literals, range over a map, or over
//     a channel the body does not own: one it does own (makes with :=,
//     sends to, closes, measures and ranges over, and hands to nothing
//     else) yields the body's own values in the body's order), operations
//     outside steps whose outcome differs on resume, in the body and in
//     every helper it reaches, of any package of the module, with the
//     whole path in the message ("rand.Intn in util.Pick, called from
//     workflow Onboard along Onboard → util.Pick → rand.Intn"): calls the
//     table of the standard library judges so (clocks and timers of
//     package time, math/rand and math/rand/v2 except seeded
//     constructors, crypto/rand, the environment, file reads, the
//     network, other programs, databases, input: nondet.go), each also
//     used as a value (now := time.Now), as is crypto/rand.Reader, unless
//     passed straight to a step, and calls of other modules the second
//     table lists (uuid.New, ulid.Make, ...) or that take no argument and
//     return a value; writes to package-level variables or into what they
//     hold, with =, op=, ++, --, a range clause's =, delete, clear or copy
//     (a local aliasing one is not traced); a range over a map or a map's
//     iterator whose body may depend on the order (one that only counts,
//     sums integers, sets or deletes its own key's entry, or appends to a
//     slice it sorts next, does not); a go statement and a select of more
//     than one case; and a read of a package-level variable of the module
//     that a function of the module writes. Calls through function values
//     and interface methods, and methods of other modules' types, are not
//     judged. Then duplicate step names, generated
//     identifiers that collide with the package's, and package-level
//     declarations shadowing a predeclared identifier the generated code
//     names (any, error and nil always; a key's string, int64 or uint64
//     conversion; the predeclared types it prints), which Go offers no
//     other way to name.
//   - emit: one x_resume.go per source file x.go holding workflows, built
//     with jennifer and formatted, and built by Go exactly when x.go is
//     (see Build constraints below). The WorkflowDef literal is rendered
//     from the model's resume.WorkflowDef (Workflow.Definition), the one
//     resumectl check-deploy compares with the journal. The generated file
//     imports each package under the name the source file gives it, so
//     the copied bodies compile unchanged. A package the source file does
//     not import (the runtime, and context, time and strconv, which the
//     generated code names on its own) gets its own name, or that name
//     with 2, 3, ... appended when the source file imports another package
//     under it or the package declares it: resume2.Call next to the user's
//     own package resume. The generated functions' parameters and
//     variables (ctx, args, err, ...) likewise shadow no package name of
//     the file, nor a predeclared identifier their bodies use (nil; string
//     in string(key)) when a parameter of the workflow or step is named
//     so.
//
// The stages up to check are also exported, without go/packages, as
// [Check] (analyze.go): package resumecheck wraps it in a go/analysis
// Analyzer and cmd/resumevet runs that under go vet -vettool, so vet and
// resumegen report the same problems at the same positions. Generate runs
// the same code in-process on the packages it loaded.
//
// # Call-site directives
//
// A //resume:step at the end of a line in a function body marks one call,
// by this rule:
//
//   - the candidates are the calls whose closing parenthesis is on the
//     line (conversions, builtins and function literals called in place
//     aside, which no directive can make a step); when none is, the
//     innermost call written across the line (a directive at the end of
//     any line but the last of a multi-line call marks that call);
//
//   - a single candidate is the call;
//
//   - of several, the one call that is already a step by its declaration
//     (//resume:step, or a //resume:workflow: a child run) is the call:
//     r := receipt(in, Pay(ctx, in)) //resume:step once marks Pay;
//
//   - with none, or more than one, such call, the line is refused with the
//     candidates listed: a reader could not tell which call the options
//     are for. Put the call on a line of its own, or put the directive on
//     a line only that call spans:
//
//     if err := Charge(ctx, it, //resume:step key=it.ID
//     quote(Price(ctx, it))); err != nil {
//
// A directive on a call of no named function (a function value) is
// refused, as is one on a line without a call.
//
// Generate returns the files' contents and the diagnostics; it writes
// nothing. [Result.Write] writes changed files atomically and deletes stale
// generated files, [Result.Check] diffs instead of writing, and
// [Result.Manifest] renders the workflows as JSON. Nothing is written when
// any package has a diagnostic.
//
// # Build constraints
//
// The name x_resume.go implies no GOOS or GOARCH (it ends in _resume), so
// the generated file carries x.go's build constraint as a //go:build line
// between the header and the package clause: x.go's own //go:build
// expression (without one, its // +build lines, as go/build reads them)
// and what x.go's name implies (x_linux.go: linux, x_amd64.go: amd64,
// x_linux_amd64.go: linux && amd64), joined with &&. A source file without
// constraints gets none.
//
// Packages are loaded as the go command builds them, for its GOOS, GOARCH
// and build tags (the environment, GOFLAGS=-tags=...). A source file that
// build excludes is not loaded at all: its workflows are neither generated
// nor checked, and nothing says so. Its generated file, which the same
// constraint excludes, is left as it is: not rewritten, not deleted as
// stale, not reported by -check. Generate such files by running resumegen
// under the build that includes them (GOOS=windows with a resumegen binary
// built for the host; go tool would build it for windows).
//
// # Reviewed exceptions
//
// A non-determinism diagnostic the user has reviewed is silenced by
//
//	//resume:allow nondeterministic reason="only logged"
//
// at the end of the offending line in a workflow body or a helper it
// reaches, or at the end of the line of a call on the way to it from the
// body (x := util.Pick(names) //resume:allow ...: a reviewer of the body
// sees it there). The reason is a mandatory non-empty Go string literal. The directive silences every
// non-determinism diagnostic of its line (placement, type and name errors
// cannot be allowed); one that silences nothing is an error. Each
// silenced diagnostic is listed, without its position, in the manifest
// comment and in the JSON manifest ("exceptions": check, what, reason).
// Exceptions do not enter the version: they change no step.
//
// # Generated shape
//
// A generated file x_resume.go starts with a reference to
// resume.SupportPackageIsVersion5 (an older runtime, without run handles,
// shared copies or lineages, fails to compile), and
// var resumeSource_x embed.FS, embedding (//go:embed) the source files its
// workflows were copied from. For a workflow W it then holds, in this
// order:
//
//   - a comment listing W's steps (name, callee, signature, policy and
//     tuning) and the constant resumeWVersion;
//   - compile-time guards (var _ func(...) = W, one per step callee) that
//     break the build when a signature changed without regenerating;
//   - var resumeW = &resume.WorkflowDef{...} with one resume.StepDef per
//     step call site, in source order, and its Source: the embedded
//     files, the declarations copied (W's and its helpers') and their
//     fingerprint (package internal/fingerprint: the tokens of the
//     declarations and the //resume: directives in and above them). The
//     runtime fingerprints the embedded source again before it runs W and
//     refuses a body edited since go generate (resume.ErrStale); go vet's
//     stale check compares the version and the fingerprint the same way;
//   - an init function setting resumeW.Run (which decodes the run's input
//     and calls the durable body) and calling resume.Register(W, resumeW),
//     so user code never needs a generated identifier to run W;
//   - the run handle WRun (Type_MRun for a method; not for an old
//     version), a struct of an engine and a run id, with one method per
//     event W's steps await, SignalNAME(ctx, payload T), NAME the event's
//     letters and digits capitalized ("payment-received":
//     SignalPaymentReceived; two events with one method, or one with none,
//     are refused), T the Await's type argument, and Wait(ctx) returning
//     W's output (or only its error). They call resume.SignalRun and
//     resume.WaitRun, which refuse a run of another workflow: a misspelt
//     event, a payload of another type, an event the workflow's child
//     awaits sent to the parent's handle, are compile errors. User code may
//     name WRun before the file exists: the generator, which reads its
//     own output as empty, does not count that as a type error;
//   - func resumeWBody: a deep copy of W's declaration, comments kept,
//     where only the callee of each step call is replaced by its wrapper.
//     Arguments therefore stay where they were and Go evaluates them in the
//     original order: a step nested in another step's arguments runs first,
//     a step in a loop runs on each iteration;
//   - one wrapper func resumeW_<step> per call site, taking the receiver
//     (for methods), ctx and the callee's remaining parameters, and calling
//     resume.Call or resume.Call0 with &resumeW.Steps[i]; inside it the
//     callee is called through resume.Callee(ctx, Callee), the seam where
//     a test harness (runtime/resumetest) sees each execution and may
//     substitute a test double. A callee without a
//     leading context.Context gets the workflow's own context at the call
//     site. A step with pointer parameters (Fetch(ctx, id, &info)) may
//     write its result through them: its wrapper journals a generated
//     struct resumeW_<step>Out holding the result and each pointee after
//     the call, and writes the pointees back from it, which on replay
//     restores what the first execution wrote. A step whose code (read
//     from the module's source, through its own calls; the standard
//     library by a table: sort.Strings sorts, strings.Join reads) writes
//     into a slice or a map the body hands it journals it the same way,
//     after the call, in the same struct (copy(s, out.Arg2); the map
//     emptied and refilled), and its canonical line says so
//     (writes-back=arg2): the version changes when the code starts or
//     stops writing. A step that appends to a slice it is handed (which
//     may write past its length), writes into a slice or map JSON cannot
//     carry, or whose elements are references, writes through a struct it
//     is handed, or uses the body's own channel, closure or writer, is
//     refused with the fix (return the value instead), as is a callee
//     whose code is not read (another module's, an interface method no
//     method of the module implements) taking a slice, a map or a struct
//     holding one; an interface method's implementations in the module
//     decide for it. A value the call makes ([]byte(s), a composite
//     literal, make) is no one else's and is not looked at. A pointee JSON
//     cannot carry entirely (an unexported or json:"-" field) and a
//     variadic pointer parameter are refused, as is a call-site step on a method with a
//     pointer receiver whose type has exported fields (cmd.Run(), then
//     cmd.Stdout) or is no struct (type List []string; l.Load()): the
//     receiver's state is not journaled. A declared step
//     method's receiver is a dependency (a client, *sql.DB) and is not
//     journaled either.
//
// # Error identities
//
// A step error the body received is replayed from the journal on resume
// (the model collects them, the runtime's errorcodec.go journals them). For it to
// answer the body's tests as the original did, the generator lists in
// resumeW's Errors, sorted by id, the identities W's body tests: package-
// level error variables compared with errors.Is, ==, != or a switch case
// (resume.ErrorSentinel), and concrete error types looked for with
// errors.As, errors.AsType, a type assertion or a type switch case on an
// error (resume.ErrorType). A test a replayed error could not answer is
// refused at its position: a target that is not a package-level error
// variable, an interface type not every error satisfies, a type
// parameter (whatever its constraint), an error type
// whose value JSON cannot carry (unexported or json:"-" fields, fields of
// func, channel or interface type other than error; exported fields of
// type error are journaled as errors of their own) or that the generated
// file cannot name. The list changes no journal key, so it does not enter
// the version.
//
// # Keys
//
// A call-site directive may end with key=EXPR (EXPR runs to the end of the
// directive, so key= comes last and may hold spaces). EXPR is parsed with
// go/parser and type-checked in the scope of the call; its type must be a
// string or integer kind, or implement fmt.Stringer (which wins). The
// wrapper takes the key as an extra last parameter, converts it (string,
// strconv.FormatInt/FormatUint, String()) and calls resume.CallKey or
// resume.Call0Key, so the journal key is Name[key]. The durable body passes
// EXPR as the last argument: Go evaluates it after the call's own
// arguments, as the order of the source reads.
//
// # Helpers
//
// The step search (package model) follows the workflow body's static
// calls of functions and methods declared, with a body, in any package
// read from source (the workflow's, and the packages of the main module
// it imports), recursively, and function literals called on the spot
// (func() { ... }()), whose body runs where it is written. The call graph
// is package generator/internal/calls. A step call site inside a helper
// is one step however often the helper runs (its executions are numbered
// at run time, like a loop's, or keyed with key=); name= and key= work at
// call sites inside helpers. Steps are listed depth first in source
// order, each helper entered at its first call; two call sites with one
// name, in the body or in helpers, are an error. Helpers that reach no
// step stay plain calls (they are walked all the same, for the checks).
// Workflows called from a workflow are not followed: they are child runs
// (see Child runs).
//
// A helper of the workflow's own package that reaches a step (directly or
// through further helpers) gets, per workflow, a durable copy
// resumeW_<helper> (resumeW_<Type>_<method> for a method, whose receiver
// becomes the first parameter) in which step calls go to the wrappers and
// helper calls to the copies; the body's calls go to the copies. A helper
// step whose callee takes no context.Context gets the helper's own context
// parameter.
//
// A helper of another package of the module cannot be copied into the
// workflow's package: its body may name its package's unexported
// identifiers. It gets one shared copy in its own package, in the
// generated file of its source file (util.go → util_resume.go, beside the
// file's own workflows if it has any): Resume_<helper> when the helper is
// exported, for the workflow's code to call (util.Resume_NotifyAll(ctx,
// owners)), resume_<helper> when it is not, for the package's other
// copies. One copy serves every workflow that reaches it, so its wrappers
// (resume_<helper>_<step>) cannot name a workflow's step: each call site
// has an ID ("example.com/app/util.NotifyAll:0", its place among the
// helper's journaled calls), which the StepDef of every workflow reaching
// it carries (Site), and the wrapper journals under resume.Site(ctx, ID),
// the step of the workflow whose run ctx holds. Waits in a shared copy stay
// as written, as in a workflow body. The generated file registers its
// embedded source (resume.RegisterSource), and the workflow's Source lists
// the shared copies' declarations with their package: the runtime refuses
// to run the workflow once the helper's source changed without go
// generate, as it does for its own body. A helper of another package is
// refused, at the call, when it cannot be copied: generic, reached through
// an embedded field or as a method expression, calling a step whose
// callee takes no context without a context parameter of its own, or with
// a key= its copy cannot compile.
//
// A run writes the shared copies the workflows it models reach, in their
// packages, whether or not those packages are among its patterns (their
// own workflows, if any, are then generated too). A package's copies
// file records, per package, which helpers its workflows call ("// For
// example.com/app: NotifyAll."): a later run that does not model that
// package (resumegen ./other) keeps its copies, so it still builds, and
// a run that models it writes what it calls now. A package holding a
// copies file is type-checked, whoever's run finds it, and the file
// deleted once no workflow calls its helpers.
//
// Every check of a workflow body applies in the helpers it reaches, of
// any package, at the helper's line, with the path from the workflow in
// the message ("(in util.Pick, called from Onboard via notifyAll →
// util.Pick)"); a //resume:allow in a helper works as in the body, and so
// does one at the end of the line of a call on the way to it. Refused,
// with the fix: a call of a helper that runs steps from a go statement, a
// closure, a select or a map range; a helper that cannot be copied (a
// generic helper that runs steps, one reached through an embedded field
// or as a method expression); a function of the package or of another
// package of the module that runs steps (or is one, an interface method
// declared a step too) used as a value; a
// call through a function value when such a function has its type (as a
// function, method value or method expression); a call of an interface
// method, not itself a step, that such a method implements; and a call of
// a function of another module that may run a step. Other modules are not
// type-checked here, so that last check reads their source (package
// calls) and matches by name, erring towards refusal: a call in the
// callee's body with a trailing //resume:step, of a name its package
// declares //resume:step, of a same-named function or method of its
// package, or of pkg.F in another package outside GOROOT, is followed;
// function values and interface calls inside them are not. A function of
// another module declared //resume:step is a step, with its directive's
// options.
//
// # Child runs
//
// A call of a //resume:workflow function, of the package or of another
// package of the module (its directive read from source), in
// a workflow body or a helper it reaches, is a child run: a run of its own, with its own journal and version, whose
// id is the parent's id, a slash and the call's step key. The call site is
// a step of the caller, named after the callee (name= and key= at the call
// site work, and every placement rule applies), with the policy "child" in
// the manifest comment, the JSON manifest and the version's canonical
// line; the child's own steps do not enter the caller's version. Its
// StepDef has Policy PolicyDefault and Child true, and its wrapper
// resumeW_<step> calls resume.CallChild or resume.CallChild0 (Key with
// key=) with the workflow function itself, the plain call (used outside a
// run) and the parameters after the context (the child's journaled input;
// a variadic parameter as its slice). Recursion and mutual recursion are
// allowed: each level is a run of its own, and the generated code has no
// initialization cycle (Run is set in init). Refused at the call site,
// with the fix: once, tx, retry=, backoff= or timeout= at a child call
// (the child's steps carry their policies), key= on a variadic workflow,
// a workflow that takes a pointer (the child decodes its input from the
// journal, so its writes through it would never reach the caller),
// a workflow used as a function value or a call through a value of a
// workflow's type, a workflow of another package whose signature a
// workflow may not have or whose input or output JSON cannot carry, and a
// call of a function of another package that calls a workflow. A function
// marked both //resume:workflow and //resume:step is refused at its
// declaration.
//
// # Waits
//
// A call of resume.Sleep, resume.SleepUntil or resume.Await[T] in a
// workflow body or a helper it calls is a journaled point of
// the step list, one entry per call site in source order with the steps:
// it enters the version, the manifest comment, the JSON manifest and the
// WorkflowDef's Steps, but its call is not rewritten, since the runtime
// finds the run in the context. Sleeps and SleepUntils are all named
// resume.Sleep (the runtime numbers their rows as a loop's) with their own
// callee and signature. An Await is named by its event name, which must
// be a constant string and shares the namespace of step names; its
// signature is the instantiated one, its shape and JSON type those of T,
// which must be journalable. The durations and times passed are arguments
// and do not enter the version. A wait in a helper of another package of
// the module is one of the workflow's, as a step there is. Waits are
// refused where steps are (go, select, function literals, unordered
// ranges) and also in deferred calls, as function values, in functions of
// another module, under a //resume:step, and in the body of a function
// declared //resume:step. time.Sleep and the timers of package time are
// refused with resume.Sleep as the way out.
//
// # Lineage
//
// The runtime orders versions by the code's history, never by the order
// the journal first saw them: a worker takes the runs of its own versions
// and of the versions in their lineage (resume.WorkflowDef.Lineage), and
// leaves every other version's runs alone. The model computes a
// workflow's lineage from the definitions recorded in the generated files
// of the run's packages before this run rewrites them (package load reads
// them): those of its identity (its ID, or an identity either one lists
// as an alias), its own output file's first, then the others by file (a
// workflow moved to another file, or with name= to another package
// generated in the same run). The lineage is each recorded current
// version followed by its recorded lineage, then the versions of
// descends-from= (what no generated file records: a move from another
// module, a lost file), then the old versions the package keeps
// (old-version-of=) and recorded ones; without the workflow's own version
// (a reverted step list), cut to resume.LineageLimit. An old version's
// lineage is the one recorded for its version. The emitter writes it one
// version a line, newest first (Lineage: []string{...}), so a step-list
// change adds one line to the diff, and unchanged code regenerates the
// same bytes. It does not enter the version.
//
// When a workflow's recorded definition has, at some place of its step
// list, a step whose name is gone and the new list has there a step of
// the same callee (or the callee renamed with it) and signature under a
// new name without renamed-from=, check likelyrenames warns at the call
// (package deploy's LikelyRenames, the rule the runtime parks runs by).
// A warning, not a refusal: the runtime never takes such a rename as safe,
// and a refusal could only be silenced by regenerating once more. A
// generated file that does not parse (a merge conflict) is warned about
// too (check priors): the lineage it records may be lost.
//
// # Near-miss directives
//
// A comment meant as a directive that is not one is an error at its
// position, since resumegen would otherwise ignore it silently: a space
// after the slashes (// resume:step once, //  resume:workflow), a block
// comment (/* resume:step */), a space after the colon (//resume: step,
// and // resume: followed by a verb), and an unknown verb (//resume:steps,
// with the verb it is close to). A comment where "resume: " is followed by
// prose (// resume: the run continues) is ordinary. A call-site directive
// on a line without a call is an error in any function.
//
// # Version
//
// A workflow's version is the first 16 hex digits of the SHA-256 of its
// canonical text: the workflow's signature and the JSON shape of the run's
// input and output, then its canonical step list: one line per step call
// site in source order,
// "name\tcallee\tsignature\tpolicy\n", with the callee and the types of the
// signature fully qualified and parameter names left out. A keyed call site
// adds "\tkey=EXPR" (EXPR printed canonically) before the newline: adding,
// removing or changing a key changes the journal keys of a run, so it
// changes the version; unkeyed steps hash exactly as before. The manifest
// comment shows key=EXPR after the policy and the JSON manifest has a "key"
// field. Each step's line is followed by the JSON shape of what it
// journals: its result and, for a pointer parameter, the pointee, which the
// wrapper journals after the call and writes back on replay. A shape is one
// line per JSON field of each named struct type reached (visited once, so
// recursive types end): its JSON key, type and encoding options, following
// encoding/json (unexported and json:"-" fields left out, embedded structs
// promoted); a type with its own MarshalJSON/UnmarshalJSON or
// MarshalText/UnmarshalText is opaque and shown by name. The manifest
// comment lists the shapes, "ScoreAll: result Score: Points int", and the
// JSON manifest has a "shape" field. Adding, removing, renaming, retagging
// or retyping a journaled field changes the version; reordering fields,
// adding methods or unexported fields does not. Inserting,
// removing or reordering steps, renaming one, changing a step's parameter or
// result types or its policy changes the version; renaming variables,
// editing comments or changing code between steps does not. Retry, backoff
// and timeout deliberately stay out of the version: tuning retries must not
// strand runs that are already in flight.
package generator
