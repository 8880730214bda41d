// Package directive is the generator's second stage: it reads the
// //resume: directives of a package (and, on demand, of the declarations
// of other packages of the module) and binds each call-site directive to
// the one call it marks. It reports what does not parse, what is
// attached to nothing, near misses of the directive form, and lines whose
// call a reader could not tell; what the directives mean for a workflow
// is the model's.
package directive

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// Prefix starts every resumegen directive. Like //go: directives it
// has no space after the slashes.
const Prefix = "//resume:"

// Policy is a step's delivery guarantee as written in directives.
type Policy string

const (
	PolicyDefault Policy = "default"
	PolicyOnce    Policy = "once"
	PolicyTx      Policy = "tx"
)

// Directive is one parsed //resume: comment.
type Directive struct {
	// Verb is "workflow", "step" or "allow".
	Verb string
	// Text is the whole comment, for messages.
	Text string
	// Pos is the comment's position.
	Pos token.Pos
	// Step are the options of //resume:step.
	Step StepOptions
	// Workflow are the options of //resume:workflow.
	Workflow WorkflowOptions
	// Reason is the reason= of //resume:allow.
	Reason string
}

// WorkflowOptions are the options of a //resume:workflow directive.
type WorkflowOptions struct {
	// Name is name=, the workflow's stable identity, or "".
	Name string
	// OldOf is old-version-of=, the Go name of the workflow of which this
	// function keeps an old version, or "".
	OldOf string
	// Timeout is timeout=, the run deadline counted from a run's creation
	// (resume.WorkflowDef.Timeout), or 0.
	Timeout time.Duration
	// Queue is queue=, the queue the workflow's runs are claimed through
	// (resume.WorkflowDef.Queue), or "".
	Queue string
	// DescendsFrom are the versions of descends-from=: versions the
	// workflow descends from that its generated files cannot tell (a
	// generated file lost, a workflow moved to another module), added to
	// its lineage (resume.WorkflowDef.Lineage).
	DescendsFrom []string
}

// StepOptions are the options of a //resume:step directive. The Has*
// fields record which options were written, so that a call-site directive
// overrides only what it names.
type StepOptions struct {
	Name       string
	Policy     Policy
	Attempts   int
	BackoffMin time.Duration
	BackoffMax time.Duration
	Timeout    time.Duration
	HasPolicy  bool
	HasBackoff bool
	// Key is the call site's key=EXPR printed canonically (see
	// CanonicalKey), or "". It enters the version.
	Key string
	// KeySource is EXPR as the user wrote it, which the durable body
	// evaluates.
	KeySource string
	// Renamed are the step's earlier names (renamed-from=), and
	// RenamedPos the position of the directive that gave them in the
	// package's file set (NoPos for a directive read from another
	// package's source).
	Renamed    []string
	RenamedPos token.Pos
}

// Override returns o with every option set in site replacing o's.
func (o StepOptions) Override(site StepOptions) StepOptions {
	if site.Name != "" {
		// A call site's name= names the step itself: the declaration's
		// renamed-from= was about the callee's name.
		o.Name, o.Renamed, o.RenamedPos = site.Name, nil, token.NoPos
	}
	if site.Renamed != nil {
		o.Renamed, o.RenamedPos = site.Renamed, site.RenamedPos
	}
	if site.HasPolicy {
		o.Policy, o.HasPolicy = site.Policy, true
	}
	if site.Attempts != 0 {
		o.Attempts = site.Attempts
	}
	if site.HasBackoff {
		o.BackoffMin, o.BackoffMax, o.HasBackoff = site.BackoffMin, site.BackoffMax, true
	}
	if site.Timeout != 0 {
		o.Timeout = site.Timeout
	}
	if site.Key != "" {
		o.Key, o.KeySource = site.Key, site.KeySource
	}
	return o
}

// IsDirective reports whether the comment text is a resumegen directive.
func IsDirective(text string) bool { return strings.HasPrefix(text, Prefix) }

// Parse parses one //resume: comment. callSite allows the options only
// valid at a call site (key=).
func Parse(c *ast.Comment, callSite bool) (Directive, error) {
	d := Directive{Text: c.Text, Pos: c.Slash}
	after := strings.TrimPrefix(c.Text, Prefix)
	if strings.TrimLeft(after, " \t") != after && strings.TrimSpace(after) != "" {
		fields := strings.Fields(after)
		return d, fmt.Errorf("%s: a space after resume: leaves the verb out: write //resume:%s", c.Text, strings.Join(fields, " "))
	}
	fields := strings.Fields(after)
	if len(fields) == 0 {
		return d, fmt.Errorf("%s: missing verb (want //resume:workflow or //resume:step)", c.Text)
	}
	d.Verb = fields[0]
	switch d.Verb {
	case "workflow":
		wf, err := ParseWorkflowOptions(fields[1:])
		if err != nil {
			return d, fmt.Errorf("%s: %w", c.Text, err)
		}
		d.Workflow = wf
		return d, nil
	case "step":
		opts, err := parseStepOptions(fields[1:], callSite, keyText(after))
		if err != nil {
			return d, fmt.Errorf("%s: %w", c.Text, err)
		}
		if opts.Renamed != nil {
			opts.RenamedPos = c.Slash
		}
		d.Step = opts
		return d, nil
	case "allow":
		_, rest, _ := strings.Cut(strings.TrimPrefix(c.Text, Prefix), "allow")
		reason, err := parseAllow(rest)
		if err != nil {
			return d, fmt.Errorf("%s: %w", c.Text, err)
		}
		d.Reason = reason
		return d, nil
	}
	if v := nearVerb(d.Verb); v != "" {
		return d, fmt.Errorf("%s: unknown directive %q: did you mean //resume:%s? (want //resume:workflow, //resume:step or //resume:allow)", c.Text, "resume:"+d.Verb, v)
	}
	return d, fmt.Errorf("%s: unknown directive %q (want //resume:workflow, //resume:step or //resume:allow)", c.Text, "resume:"+d.Verb)
}

// keyText is what follows the first key= option of a //resume:step's
// text after the prefix, as written (spaces inside a string literal
// kept), or "".
func keyText(after string) string {
	for i := 0; i+4 <= len(after); i++ {
		if after[i:i+4] == "key=" && (i == 0 || after[i-1] == ' ' || after[i-1] == '\t') {
			return strings.TrimSpace(after[i+4:])
		}
	}
	return ""
}

// CanonicalKey prints a key= expression as the version hashes it and the
// manifest shows it: go/types' ExprString, or, for an expression holding
// a composite or function literal (which ExprString abbreviates), gofmt's
// printing of it on one line.
func CanonicalKey(e ast.Expr) string {
	abbreviated := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.CompositeLit, *ast.FuncLit:
			abbreviated = true
		}
		return !abbreviated
	})
	if !abbreviated {
		return types.ExprString(e)
	}
	var b strings.Builder
	if err := format.Node(&b, token.NewFileSet(), e); err != nil {
		return types.ExprString(e)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// parseStepOptions parses the options after //resume:step.
func parseStepOptions(fields []string, callSite bool, keySrc string) (StepOptions, error) {
	var o StepOptions
	seen := map[string]bool{}
	for i, f := range fields {
		key, val, hasVal := strings.Cut(f, "=")
		if seen[key] {
			return o, fmt.Errorf("option %s given twice", key)
		}
		seen[key] = true
		switch key {
		case "once", "tx":
			if hasVal {
				return o, fmt.Errorf("option %s takes no value", key)
			}
			if o.HasPolicy {
				return o, fmt.Errorf("options once and tx exclude each other: once is at most once, tx is exactly once inside the journal's transaction")
			}
			o.Policy, o.HasPolicy = Policy(key), true
		case "name":
			if !ValidName(val) {
				return o, fmt.Errorf("bad name=%q: a step name is letters, digits, '_', '.', '-' or '/'", val)
			}
			o.Name = val
		case "renamed-from":
			names, err := parseRenamedFrom(val)
			if err != nil {
				return o, err
			}
			o.Renamed = names
		case "retry":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return o, fmt.Errorf("bad retry=%q: want the total number of attempts, an integer >= 1", val)
			}
			o.Attempts = n
		case "backoff":
			lo, hi, ok := strings.Cut(val, "..")
			if !ok {
				return o, fmt.Errorf("bad backoff=%q: want MIN..MAX, e.g. backoff=200ms..30s", val)
			}
			min, err1 := parsePositiveDuration(lo)
			max, err2 := parsePositiveDuration(hi)
			if err1 != nil || err2 != nil {
				return o, fmt.Errorf("bad backoff=%q: want MIN..MAX Go durations, e.g. backoff=200ms..30s", val)
			}
			if min > max {
				return o, fmt.Errorf("bad backoff=%q: MIN is greater than MAX", val)
			}
			o.BackoffMin, o.BackoffMax, o.HasBackoff = min, max, true
		case "timeout":
			d, err := parsePositiveDuration(val)
			if err != nil {
				return o, fmt.Errorf("bad timeout=%q: want a positive Go duration, e.g. timeout=30s", val)
			}
			o.Timeout = d
		case "key":
			if !callSite {
				return o, fmt.Errorf("option key= is only valid on a call site")
			}
			// EXPR runs to the end of the directive, so that it may
			// hold spaces: key= is the last option. It is kept as
			// written, spaces in its string literals too.
			src := keySrc
			if src == "" {
				src = strings.Join(append([]string{val}, fields[i+1:]...), " ")
			}
			expr, err := parser.ParseExpr(src)
			if err != nil || src == "" {
				return o, fmt.Errorf("bad key=%s: want a Go expression, and key= last on the line (EXPR runs to the end of the directive)", src)
			}
			o.Key, o.KeySource = CanonicalKey(expr), src
			return o, nil
		default:
			return o, unknownOption(f, key, stepOptionNames, workflowOptionNames, "//resume:workflow")
		}
	}
	return o, nil
}

// stepOptionNames and workflowOptionNames are the options of
// //resume:step and //resume:workflow, as listed in messages.
var (
	stepOptionNames     = []string{"name=", "once", "tx", "retry=", "backoff=", "timeout=", "key=", "renamed-from="}
	workflowOptionNames = []string{"name=", "old-version-of=", "timeout=", "queue=", "descends-from="}
)

// ParseWorkflowOptions parses the options after //resume:workflow.
func ParseWorkflowOptions(fields []string) (WorkflowOptions, error) {
	var o WorkflowOptions
	seen := map[string]bool{}
	for _, f := range fields {
		key, val, _ := strings.Cut(f, "=")
		if seen[key] {
			return o, fmt.Errorf("option %s given twice", key)
		}
		seen[key] = true
		switch key {
		case "name":
			if !ValidName(val) {
				return o, fmt.Errorf("bad name=%s: a workflow's name is a non-empty token of letters, digits, '.', '/', '_' and '-', such as name=billing.Onboard%s", val, quotedFix(val))
			}
			o.Name = val
		case "old-version-of":
			if !validGoName(val) {
				return o, fmt.Errorf("bad old-version-of=%s: want the Go name of a workflow of this package, such as old-version-of=Onboard (or Type.Method for a method)", val)
			}
			o.OldOf = val
		case "timeout":
			d, err := parsePositiveDuration(val)
			if err != nil {
				return o, fmt.Errorf("bad timeout=%q: want a positive Go duration, the run's deadline from its creation, e.g. timeout=24h", val)
			}
			o.Timeout = d
		case "queue":
			if err := journal.CheckQueueName(val); err != nil {
				return o, fmt.Errorf("bad queue=%s: a queue's name is letters, digits, '_', '.' and '-', starting with a letter or digit, at most %d bytes, such as queue=emails%s", val, journal.MaxQueueNameBytes, quotedQueueFix(val))
			}
			o.Queue = val
		case "descends-from":
			vs, err := parseVersions(val)
			if err != nil {
				return o, err
			}
			o.DescendsFrom = vs
		default:
			return o, unknownOption(f, key, workflowOptionNames, stepOptionNames, "//resume:step")
		}
	}
	if o.Name != "" && o.OldOf != "" {
		return o, fmt.Errorf("name= and old-version-of= exclude each other: an old version takes the identity of the workflow it is a version of; drop name=")
	}
	return o, nil
}

// parseVersions parses the value of descends-from=: one or more workflow
// versions (16 lowercase hex digits, as resumegen prints them), separated
// by commas.
func parseVersions(val string) ([]string, error) {
	var out []string
	for _, v := range strings.Split(val, ",") {
		if len(v) != 16 || strings.Trim(v, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("bad descends-from=%s: want workflow versions as resumegen prints them (16 hex digits), separated by commas, such as descends-from=58d7f6410c0f1308", val)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// quotedFix suggests the name without its quotes when val is quoted.
func quotedFix(val string) string {
	if u, err := strconv.Unquote(val); err == nil && ValidName(u) {
		return ": write name=" + u + " without quotes"
	}
	return ""
}

// quotedQueueFix is quotedFix for queue=: the fix when val is a valid
// queue name in Go quotes.
func quotedQueueFix(val string) string {
	if u, err := strconv.Unquote(val); err == nil && journal.CheckQueueName(u) == nil {
		return ": write queue=" + u + " without quotes"
	}
	return ""
}

// parseRenamedFrom parses the value of renamed-from=: one or more earlier
// step names, separated by commas.
func parseRenamedFrom(val string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(val, ",") {
		if !ValidName(n) {
			return nil, fmt.Errorf("bad renamed-from=%s: want the step's earlier name (letters, digits, '_', '.', '-' or '/'), several separated by commas, such as renamed-from=Score", val)
		}
		if slices.Contains(names, n) {
			return nil, fmt.Errorf("bad renamed-from=%s: %s is listed twice", val, n)
		}
		names = append(names, n)
	}
	return names, nil
}

// validGoName reports whether s is an identifier or Type.Method.
func validGoName(s string) bool {
	typ, method, isMethod := strings.Cut(s, ".")
	if isMethod {
		return token.IsIdentifier(typ) && token.IsIdentifier(method)
	}
	return token.IsIdentifier(s)
}

// unknownOption is the error for an option the directive does not have:
// it names an option the field is close to (renamed_from=, oldversionof=),
// and one that belongs on the other directive.
func unknownOption(field, key string, own, other []string, otherVerb string) error {
	list := strings.Join(own, ", ")
	for _, o := range other {
		if strings.TrimSuffix(o, "=") == key && !slices.Contains(own, o) {
			return fmt.Errorf("option %s belongs on %s, not here (want %s)", o, otherVerb, list)
		}
	}
	if near := nearOption(key, own); near != "" {
		return fmt.Errorf("unknown option %q: did you mean %s? (want %s)", field, near, list)
	}
	return fmt.Errorf("unknown option %q (want %s)", field, list)
}

// nearOption returns the option of opts that key is a near miss of: equal
// but for case, '-' and '_', or one edit away, or "".
func nearOption(key string, opts []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("-", "", "_", "", "=", "").Replace(strings.ToLower(s))
	}
	k := norm(key)
	for _, o := range opts {
		if n := norm(o); len(n) > 2 && (n == k || editDistance(n, k) <= 1+len(n)/8) {
			return o
		}
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b: the
// edits are inserting, deleting or replacing a byte, or swapping two
// adjacent ones (nmae= is one edit from name=).
func editDistance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, rows[i-2][j-2]+1)
			}
			rows[i][j] = d
		}
	}
	return rows[len(a)][len(b)]
}

func parsePositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("not positive")
	}
	return d, nil
}

func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r == '_' || r == '.' || r == '-' || r == '/' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// Tuning renders the options as they appear in the manifest comment, after
// the policy: "retry=5 backoff=200ms..30s timeout=1m0s".
func (o StepOptions) Tuning() string {
	var parts []string
	if o.Attempts != 0 {
		parts = append(parts, fmt.Sprintf("retry=%d", o.Attempts))
	}
	if o.HasBackoff {
		parts = append(parts, fmt.Sprintf("backoff=%s..%s", shortDuration(o.BackoffMin), shortDuration(o.BackoffMax)))
	}
	if o.Timeout != 0 {
		parts = append(parts, fmt.Sprintf("timeout=%s", shortDuration(o.Timeout)))
	}
	return strings.Join(parts, " ")
}

// shortDuration is d.String() without zero trailing units: 1m, not 1m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// directiveVerbs are the verbs a //resume: directive may have, and the
// near misses of them that a near-miss check recognizes after a space.
var directiveVerbs = []string{"workflow", "step", "allow"}

// NearMiss returns the error for a comment that is meant as a directive
// but is not one (isDirective is false), so that resumegen and go vet
// would ignore it silently, or "" for an ordinary comment:
//
//	// resume:step once      a space after //
//	//  resume:workflow      spaces after //
//	/* resume:step */        a block comment
//	// resume: step          spaces on both sides, followed by a verb
//
// Prose that happens to start with "resume:" ("// resume: the run
// continues") is left alone: after "resume:" and a space, only a word
// that starts like a verb counts.
func NearMiss(text string) string {
	var body string
	block := false
	switch {
	case IsDirective(text):
		return "" // a directive: parseDirective checks it
	case strings.HasPrefix(text, "//"):
		body = text[2:]
	case strings.HasPrefix(text, "/*"):
		body, block = strings.TrimSuffix(text[2:], "*/"), true
	default:
		return ""
	}
	trimmed := strings.TrimLeft(body, " \t")
	rest, ok := strings.CutPrefix(trimmed, "resume:")
	if !ok {
		return ""
	}
	spaced := strings.TrimLeft(rest, " \t")
	word := spaced
	if i := strings.IndexFunc(word, func(r rune) bool { return !('a' <= r && r <= 'z') }); i >= 0 {
		word = word[:i]
	}
	verb := nearVerb(word)
	if verb == "" || spaced != rest && verb != word {
		return "" // prose, unless a verb follows (as such after a space)
	}
	fields := strings.Fields(spaced)
	want := Prefix + verb
	if len(fields) > 1 {
		want += " " + strings.Join(fields[1:], " ")
	}
	quoted := strings.TrimSpace(text)
	switch {
	case block:
		return fmt.Sprintf("%s: a block comment is not a directive: write the line comment %s", quoted, want)
	case trimmed != body: // always: "//resume:" is a directive
		return fmt.Sprintf("%s: with a space after //, this is an ordinary comment, not a directive: write %s (no space, like //go: directives)", quoted, want)
	}
	return ""
}

// nearVerb returns the directive verb that word is or starts like
// (steps, stepp, workflows), or "".
func nearVerb(word string) string {
	for _, v := range directiveVerbs {
		if word == v || (len(word) > len(v) && strings.HasPrefix(word, v)) || (len(word) >= 3 && strings.HasPrefix(v, word)) {
			return v
		}
	}
	return ""
}

// parseAllow parses the rest of //resume:allow: the check's name and a
// mandatory quoted reason.
func parseAllow(rest string) (string, error) {
	check, rest, _ := strings.Cut(strings.TrimSpace(rest), " ")
	if check != "nondeterministic" {
		return "", fmt.Errorf("want //resume:allow nondeterministic reason=\"...\" (the only check that can be allowed is nondeterministic)")
	}
	val, ok := strings.CutPrefix(strings.TrimSpace(rest), "reason=")
	if !ok {
		return "", fmt.Errorf("missing reason=\"...\": a reviewed exception says why it is safe")
	}
	reason, err := strconv.Unquote(val)
	if err != nil || strings.TrimSpace(reason) == "" {
		return "", fmt.Errorf("bad reason=%s: want a non-empty Go string literal, e.g. reason=\"only logged\"", val)
	}
	return reason, nil
}

// PolicyOptions names the options of o that set a step's delivery policy
// or tuning (once, tx, retry=, backoff=, timeout=), or "".
func (o StepOptions) PolicyOptions() string {
	var bad []string
	if o.HasPolicy {
		bad = append(bad, string(o.Policy))
	}
	if o.Attempts != 0 {
		bad = append(bad, "retry=")
	}
	if o.HasBackoff {
		bad = append(bad, "backoff=")
	}
	if o.Timeout != 0 {
		bad = append(bad, "timeout=")
	}
	return strings.Join(bad, ", ")
}
