package resumeui

import (
	"regexp"
	"strings"

	"github.com/resumegen/resumegen/runtime/deploy"
)

// graphClasses are the classDef lines appended to a run's step graph. The
// page's style.css repeats their look for the drawn SVG, since the
// Content-Security-Policy keeps Mermaid's inline <style> out.
const graphClasses = `  classDef succeeded fill:#e3f5e6,stroke:#2f8a3e
  classDef failed fill:#fde4e1,stroke:#c0392b
  classDef inflight fill:#fff4d6,stroke:#c08a00
  classDef current stroke:#1f4fd1,stroke-width:3px
`

// stepLine is a `%% step nID Name` line of a stored graph; the node id
// must be a plain Mermaid identifier for the page to name it in a class
// line.
var stepLine = regexp.MustCompile(`^\s*%% step ([A-Za-z0-9_]+) (\S+)\s*$`)

// markedGraph is def's graph with class lines marking the run's position:
// each step node the run journaled, by the status of its last row (plan),
// and the current step. Only node ids from the graph's own `%% step`
// lines and the fixed class names above are added.
func markedGraph(def deploy.Definition, plan []planRow) string {
	if def.Graph == "" {
		return ""
	}
	node := map[string]string{}
	for _, l := range strings.Split(def.Graph, "\n") {
		if m := stepLine.FindStringSubmatch(l); m != nil {
			node[m[2]] = m[1]
		}
	}
	var b strings.Builder
	for _, p := range plan {
		id := node[p.Name]
		if id == "" {
			continue
		}
		if c := stepClass(p.Status); c != "" {
			b.WriteString("  class " + id + " " + c + "\n")
		}
		if p.Current {
			b.WriteString("  class " + id + " current\n")
		}
	}
	if b.Len() == 0 {
		return def.Graph
	}
	return strings.TrimRight(def.Graph, "\n") + "\n" + graphClasses + b.String()
}

// stepClass is the graph class of a step whose last row has status st.
func stepClass(st string) string {
	switch st {
	case "succeeded":
		return "succeeded"
	case "failed":
		return "failed"
	case "in_flight", "waiting":
		return "inflight"
	}
	return ""
}
