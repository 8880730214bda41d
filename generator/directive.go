package generator

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
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
	// reason is the reason= of //resume:allow.
	reason string
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
}

// override returns o with every option set in site replacing o's.
func (o stepOptions) override(site stepOptions) stepOptions {
	if site.name != "" {
		o.name = site.name
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
		if len(fields) > 1 {
			return d, fmt.Errorf("%s: //resume:workflow takes no options", c.Text)
		}
		return d, nil
	case "step":
		opts, err := parseStepOptions(fields[1:], callSite)
		if err != nil {
			return d, fmt.Errorf("%s: %w", c.Text, err)
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
			return o, fmt.Errorf("unknown option %q (want name=, once, tx, retry=, backoff=, timeout=, key=)", f)
		}
	}
	return o, nil
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
