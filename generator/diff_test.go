package generator

import "testing"

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
	new := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl\nm\n"
	want := "--- a/x\n+++ b/x\n" +
		"@@ -1,7 +1,7 @@\n a\n b\n c\n-d\n+D\n e\n f\n g\n" +
		"@@ -10,3 +10,4 @@\n j\n k\n l\n+m\n"
	if got := string(unifiedDiff("x", "x", []byte(old), []byte(new), true)); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := unifiedDiff("x", "x", []byte(old), []byte(old), true); got != nil {
		t.Errorf("equal texts: got %q", got)
	}
	if got := string(unifiedDiff("x", "x", nil, []byte("a\n"), false)); got != "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n" {
		t.Errorf("new file: %q", got)
	}
}
