package directive

import (
	"strings"
	"testing"
	"time"

	"github.com/resumegen/resumegen/runtime/journal"
)

// TestDescendsFrom: descends-from= takes versions, once each.
func TestDescendsFrom(t *testing.T) {
	o, err := ParseWorkflowOptions([]string{"name=billing.Onboard", "descends-from=58d7f6410c0f1308,0854326adbd4a716,58d7f6410c0f1308"})
	if err != nil || strings.Join(o.DescendsFrom, " ") != "58d7f6410c0f1308 0854326adbd4a716" || o.Name != "billing.Onboard" {
		t.Fatalf("ParseWorkflowOptions = %+v, %v", o, err)
	}
}

// TestNearOption tries option names close to the new options, and names
// that must not be taken for them.
func TestNearOption(t *testing.T) {
	for _, tc := range []struct {
		field string
		step  bool
		want  string // part of the message
	}{
		{"renamed_from=X", true, "did you mean renamed-from=?"},
		{"renamedFrom=X", true, "did you mean renamed-from=?"},
		{"rename-from=X", true, "did you mean renamed-from=?"},
		{"old-version-of=X", true, "belongs on //resume:workflow"},
		{"old_version_of=X", false, "did you mean old-version-of="},
		{"oldversionof=X", false, "did you mean old-version-of="},
		{"old-versionof=X", false, "did you mean old-version-of="},
		{"nmae=X", false, "did you mean name=?"},
		{"NAME=X", false, "did you mean name=?"},
		{"renamed-from=X", false, "belongs on //resume:step"},
		{"key=x", false, "belongs on //resume:step"},
		{"fast", false, `unknown option "fast" (want name=, old-version-of=, timeout=, queue=, descends-from=)`},
		{"queue=", false, "bad queue=: a queue's name is letters, digits"},
		{"queue=-x", false, "bad queue=-x"},
		{"queue=a b", false, "bad queue=a"},
		{"queue=e\u00e9", false, "bad queue="},
		{`queue="emails"`, false, `bad queue="emails": a queue's name is letters, digits, '_', '.' and '-', starting with a letter or digit, at most 128 bytes, such as queue=emails: write queue=emails without quotes`},
		{"quue=emails", false, "did you mean queue="},
		{"descends-from=v1", false, "bad descends-from=v1: want workflow versions as resumegen prints them (16 hex digits)"},
		{"descends-from=58d7f6410c0f1308,", false, "bad descends-from="},
		{"descends-from=58D7F6410C0F1308", false, "bad descends-from="},
		{"descendsfrom=58d7f6410c0f1308", false, "did you mean descends-from="},
		{"descends-from=58d7f6410c0f1308", true, "belongs on //resume:workflow"},
		{"timeout=0s", false, `bad timeout="0s": want a positive Go duration`},
		{"timeout=tomorrow", false, `bad timeout="tomorrow"`},
		{"version=2", false, `unknown option "version=2" (want`},
		{"from=X", true, `unknown option "from=X" (want`},
	} {
		var err error
		if tc.step {
			_, err = parseStepOptions([]string{tc.field}, true, "")
		} else {
			_, err = ParseWorkflowOptions([]string{tc.field})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want containing %q", tc.field, err, tc.want)
		}
		if err != nil && strings.Contains(tc.want, "unknown option") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: %v suggests an option it is not close to", tc.field, err)
		}
	}
}

// TestWorkflowQueue: queue= names the workflow's queue, by the rule
// the journal stores (journal.CheckQueueName), once.
func TestWorkflowQueue(t *testing.T) {
	o, err := ParseWorkflowOptions([]string{"queue=emails.bulk_v2", "timeout=1h"})
	if err != nil || o.Queue != "emails.bulk_v2" || o.Timeout != time.Hour {
		t.Errorf("queue=emails.bulk_v2: %+v, %v", o, err)
	}
	if _, err := ParseWorkflowOptions([]string{"queue=a", "queue=b"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("queue= twice: %v", err)
	}
	long := "q" + strings.Repeat("x", 128)
	if _, err := ParseWorkflowOptions([]string{"queue=" + long}); err == nil {
		t.Errorf("queue= of %d bytes accepted", len(long))
	}
}

// TestWorkflowQueueAgreesWithJournal: the directive accepts exactly the
// names the journal stores, so that a generated program never starts a
// worker the journal refuses (or the other way round); a quoted name
// that would do gets the fix, a quoted one that would not does not.
func TestWorkflowQueueAgreesWithJournal(t *testing.T) {
	for _, name := range []string{
		"emails", "e", "0", "a.b-c_d", "A9", strings.Repeat("q", 128), strings.Repeat("q", 129),
		"", "-x", ".x", "_x", "a b", "a/b", "a:b", "é", "a\x00", "a\n", "a,b", "a=b", `"emails"`, "'emails'",
	} {
		_, err := ParseWorkflowOptions([]string{"queue=" + name})
		if jerr := journal.CheckQueueName(name); (err == nil) != (jerr == nil) {
			t.Errorf("queue=%q: directive %v, journal %v", name, err, jerr)
		}
	}
	_, err := ParseWorkflowOptions([]string{`queue="-x"`})
	if err == nil || strings.Contains(err.Error(), "without quotes") {
		t.Errorf(`queue="-x": %v, want refused without a quotes fix (-x is no name either)`, err)
	}
}

// TestWorkflowTimeout: timeout= on //resume:workflow is the runs'
// deadline, a positive Go duration.
func TestWorkflowTimeout(t *testing.T) {
	o, err := ParseWorkflowOptions([]string{"name=billing.Onboard", "timeout=36h"})
	if err != nil || o.Timeout != 36*time.Hour || o.Name != "billing.Onboard" {
		t.Errorf("timeout=36h: %+v, %v", o, err)
	}
	if _, err := ParseWorkflowOptions([]string{"timeout=1h", "timeout=2h"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("timeout= twice: %v", err)
	}
}
