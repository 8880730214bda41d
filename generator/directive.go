package generator

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"time"
)

// directivePrefix starts every resumegen directive. Like //go: directives it
// has no space after the slashes.
const directivePrefix = "//resume:"

// policy is a step's delivery guarantee as written in directives.
type policy string

const (
	policyDefault policy = "default"
	policyOnce    policy = "once"
	policyTx      policy = "tx"
)

// directive is one parsed //resume: comment.
type directive struct {
	verb string // "workflow", "step" or "allow"
	text string // the whole comment, for messages
	pos  token.Pos
	opts stepOptions
	// wf are the options of //resume:workflow.
	wf workflowOptions
	// reason is the reason= of //resume:allow.
	reason string
}

// workflowOptions are the options of a //resume:workflow directive.
type workflowOptions struct {
	// name is name=, the workflow's stable identity, or "".
	name string
	// oldOf is old-version-of=, the Go name of the workflow of which this
	// function keeps an old version, or "".
	oldOf string
	// timeout is timeout=, the run deadline counted from a run's
	// creation (resume.WorkflowDef.Timeout), or 0.
	timeout time.Duration
}

// stepOptions are the options of a //resume:step directive. The has* fields
// record which options were written, so that a call-site directive
// overrides only what it names.
type stepOptions struct {
	name       string
	policy     policy
	attempts   int
	backoffMin time.Duration
	backoffMax time.Duration
	timeout    time.Duration
	hasPolicy  bool
	hasBackoff bool
	// key is the call site's key=EXPR, printed canonically (go/types
	// ExprString), or "".
	key string
	// renamed are the step's earlier names (renamed-from=), and
	// renamedPos the position of the directive that gave them in the
	// package's file set (NoPos for a directive read from another
	// package's source).
	renamed    []string
	renamedPos token.Pos
}

// override returns o with every option set in site replacing o's.
func (o stepOptions) override(site stepOptions) stepOptions {
	if site.name != "" {
		// A call site's name= names the step itself: the declaration's
		// renamed-from= was about the callee's name.
		o.name, o.renamed, o.renamedPos = site.name, nil, token.NoPos
	}
	if site.renamed != nil {
		o.renamed, o.renamedPos = site.renamed, site.renamedPos
	}
	if site.hasPolicy {
		o.policy, o.hasPolicy = site.policy, true
	}
	if site.attempts != 0 {
		o.attempts = site.attempts
	}
	if site.hasBackoff {
		o.backoffMin, o.backoffMax, o.hasBackoff = site.backoffMin, site.backoffMax, true
	}
	if site.timeout != 0 {
		o.timeout = site.timeout
	}
	if site.key != "" {
		o.key = site.key
	}
	return o
}

// isDirective reports whether the comment text is a resumegen directive.
func isDirective(text string) bool { return strings.HasPrefix(text, directivePrefix) }

// parseDirective parses one //resume: comment. callSite allows the options
// only valid at a call site (key=).
func parseDirective(c *ast.Comment, callSite bool) (directive, error) {
	d := directive{text: c.Text, pos: c.Slash}
	after := strings.TrimPrefix(c.Text, directivePrefix)
	if strings.TrimLeft(after, " \t") != after && strings.TrimSpace(after) != "" {
		fields := strings.Fields(after)
		return d, fmt.Errorf("%s: a space after resume: leaves the verb out: write //resume:%s", c.Text, strings.Join(fields, " "))
	}
	fields := strings.Fields(after)
	if len(fields) == 0 {
		return d, fmt.Errorf("%s: missing verb (want //resume:workflow or //resume:step)", c.Text)
	}
	d.verb = fields[0]
	switch d.verb {
	case "workflow":
		wf, err := parseWorkflowOptions(fields[1:])
		if err != nil {
			return d, fmt.Errorf("%s: %w", c.Text, err)
		}
		d.wf = wf
		return d, nil
	case "step":
		opts, err := parseStepOptions(fields[1:], callSite)
		if err != nil {
			return d, fmt.Errorf("%s: %w", c.Text, err)
		}
		if opts.renamed != nil {
			opts.renamedPos = c.Slash
		}
		d.opts = opts
		return d, nil
	case "allow":
		_, rest, _ := strings.Cut(strings.TrimPrefix(c.Text, directivePrefix), "allow")
		reason, err := parseAllow(rest)
		if err != nil {
			return d, fmt.Errorf("%s: %w", c.Text, err)
		}
		d.reason = reason
		return d, nil
	}
	if v := nearVerb(d.verb); v != "" {
		return d, fmt.Errorf("%s: unknown directive %q: did you mean //resume:%s? (want //resume:workflow, //resume:step or //resume:allow)", c.Text, "resume:"+d.verb, v)
	}
	return d, fmt.Errorf("%s: unknown directive %q (want //resume:workflow, //resume:step or //resume:allow)", c.Text, "resume:"+d.verb)
}

// parseStepOptions parses the options after //resume:step.
func parseStepOptions(fields []string, callSite bool) (stepOptions, error) {
	var o stepOptions
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
			if o.hasPolicy {
				return o, fmt.Errorf("options once and tx exclude each other: once is at most once, tx is exactly once inside the journal's transaction")
			}
			o.policy, o.hasPolicy = policy(key), true
		case "name":
			if !validStepName(val) {
				return o, fmt.Errorf("bad name=%q: a step name is letters, digits, '_', '.', '-' or '/'", val)
			}
			o.name = val
		case "renamed-from":
			names, err := parseRenamedFrom(val)
			if err != nil {
				return o, err
			}
			o.renamed = names
		case "retry":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return o, fmt.Errorf("bad retry=%q: want the total number of attempts, an integer >= 1", val)
			}
			o.attempts = n
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
			o.backoffMin, o.backoffMax, o.hasBackoff = min, max, true
		case "timeout":
			d, err := parsePositiveDuration(val)
			if err != nil {
				return o, fmt.Errorf("bad timeout=%q: want a positive Go duration, e.g. timeout=30s", val)
			}
			o.timeout = d
		case "key":
			if !callSite {
				return o, fmt.Errorf("option key= is only valid on a call site")
			}
			// EXPR runs to the end of the directive, so that it may
			// hold spaces: key= is the last option.
			src := strings.Join(append([]string{val}, fields[i+1:]...), " ")
			expr, err := parser.ParseExpr(src)
			if err != nil || src == "" {
				return o, fmt.Errorf("bad key=%s: want a Go expression, and key= last on the line (EXPR runs to the end of the directive)", src)
			}
			o.key = types.ExprString(expr)
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
	workflowOptionNames = []string{"name=", "old-version-of=", "timeout="}
)

// parseWorkflowOptions parses the options after //resume:workflow.
func parseWorkflowOptions(fields []string) (workflowOptions, error) {
	var o workflowOptions
	seen := map[string]bool{}
	for _, f := range fields {
		key, val, _ := strings.Cut(f, "=")
		if seen[key] {
			return o, fmt.Errorf("option %s given twice", key)
		}
		seen[key] = true
		switch key {
		case "name":
			if !validStepName(val) {
				return o, fmt.Errorf("bad name=%s: a workflow's name is a non-empty token of letters, digits, '.', '/', '_' and '-', such as name=billing.Onboard%s", val, quotedFix(val))
			}
			o.name = val
		case "old-version-of":
			if !validGoName(val) {
				return o, fmt.Errorf("bad old-version-of=%s: want the Go name of a workflow of this package, such as old-version-of=Onboard (or Type.Method for a method)", val)
			}
			o.oldOf = val
		case "timeout":
			d, err := parsePositiveDuration(val)
			if err != nil {
				return o, fmt.Errorf("bad timeout=%q: want a positive Go duration, the run's deadline from its creation, e.g. timeout=24h", val)
			}
			o.timeout = d
		default:
			return o, unknownOption(f, key, workflowOptionNames, stepOptionNames, "//resume:step")
		}
	}
	if o.name != "" && o.oldOf != "" {
		return o, fmt.Errorf("name= and old-version-of= exclude each other: an old version takes the identity of the workflow it is a version of; drop name=")
	}
	return o, nil
}

// quotedFix suggests the name without its quotes when val is quoted.
func quotedFix(val string) string {
	if u, err := strconv.Unquote(val); err == nil && validStepName(u) {
		return ": write name=" + u + " without quotes"
	}
	return ""
}

// parseRenamedFrom parses the value of renamed-from=: one or more earlier
// step names, separated by commas.
func parseRenamedFrom(val string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(val, ",") {
		if !validStepName(n) {
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

func validStepName(s string) bool {
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

// tuning renders the options as they appear in the manifest comment, after
// the policy: "retry=5 backoff=200ms..30s timeout=1m0s".
func (o stepOptions) tuning() string {
	var parts []string
	if o.attempts != 0 {
		parts = append(parts, fmt.Sprintf("retry=%d", o.attempts))
	}
	if o.hasBackoff {
		parts = append(parts, fmt.Sprintf("backoff=%s..%s", shortDuration(o.backoffMin), shortDuration(o.backoffMax)))
	}
	if o.timeout != 0 {
		parts = append(parts, fmt.Sprintf("timeout=%s", shortDuration(o.timeout)))
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

// nearMiss returns the error for a comment that is meant as a directive
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
func nearMiss(text string) string {
	var body string
	block := false
	switch {
	case isDirective(text):
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
	want := directivePrefix + verb
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
