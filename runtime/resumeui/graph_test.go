package resumeui

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/resumegen/resumegen/runtime/deploy"
)

// TestMarkedGraph: the class lines name only nodes from the graph's own
// `%% step` lines, with the fixed class names; a step line whose node id
// is not a plain identifier, or a plan step the graph does not name, adds
// nothing.
func TestMarkedGraph(t *testing.T) {
	g := "flowchart TD\n  n3[\"A\"]\n  n4[\"B\"]\n  %% step n3 A\n  %% step n4 B\n  %% step n9;click_x C\n"
	plan := []planRow{{Name: "A", Status: "succeeded"}, {Name: "B", Status: "in_flight", Current: true}, {Name: "C", Status: "failed"}, {Name: "D", Status: "failed"}}
	got := markedGraph(deploy.Definition{Graph: g}, plan)
	if !strings.HasPrefix(got, strings.TrimRight(g, "\n")+"\n") {
		t.Fatalf("the marked graph does not start with the stored one:\n%s", got)
	}
	added := strings.TrimPrefix(got, strings.TrimRight(g, "\n")+"\n"+graphClasses)
	if want := "  class n3 succeeded\n  class n4 inflight\n  class n4 current\n"; added != want {
		t.Errorf("class lines = %q; want %q", added, want)
	}
	if got := markedGraph(deploy.Definition{Graph: g}, []planRow{{Name: "A"}}); got != g {
		t.Errorf("a run that journaled nothing changes the graph: %q", got)
	}
	if got := markedGraph(deploy.Definition{}, plan); got != "" {
		t.Errorf("no graph gives %q; want none", got)
	}
}

// TestMermaidServed: the vendored bundle, its LICENSE and graph.js are
// served by the handler itself, as scripts the page's CSP allows.
func TestMermaidServed(t *testing.T) {
	srv := serve(t, openSQLite(t), Options{})
	for path, want := range map[string]string{"static/mermaid-11.17.2/mermaid.min.js": "text/javascript", "static/graph.js": "text/javascript", "static/mermaid-11.17.2/LICENSE": ""} {
		resp, err := http.Get(srv.URL + "/ops/" + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) == 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) {
			t.Errorf("GET %s: %d, %d bytes, %s; want 200, the file, %q", path, resp.StatusCode, len(b), resp.Header.Get("Content-Type"), want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") {
			t.Errorf("GET %s: CSP %q allows more than the UI's own scripts", path, csp)
		}
		cache := resp.Header.Get("Cache-Control")
		if versioned := strings.Contains(path, "mermaid-11.17.2/"); versioned != strings.Contains(cache, "immutable") || !versioned && cache != "no-store" {
			t.Errorf("GET %s: Cache-Control %q; want the versioned bundle kept, anything else not stored", path, cache)
		}
	}
}
