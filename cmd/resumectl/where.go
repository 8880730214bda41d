package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/resumegen/resumegen/runtime/deploy"
	"github.com/resumegen/resumegen/runtime/journal"
)

// callSites maps each step name of a version of a workflow to its call
// site in that version's code, as the stored definition records it: a
// name called at several sites (a step shared by branches) maps to all of
// them. It is empty when the journal holds no definition, or one saved
// before call sites were recorded.
func callSites(ctx context.Context, j journal.Journal, workflow, version string) (map[string]string, error) {
	m, found, err := j.LoadManifest(ctx, workflow, version)
	if err != nil {
		return nil, fmt.Errorf("definition of version %s: %w", version, err)
	}
	var def deploy.Definition
	if !found || len(m.Definition) == 0 || json.Unmarshal(m.Definition, &def) != nil {
		return map[string]string{}, nil
	}
	out := map[string]string{}
	for _, s := range def.Steps {
		switch cur := out[s.Name]; {
		case s.Pos == "":
		case cur == "":
			out[s.Name] = s.Pos
		case !strings.Contains(", "+cur+", ", ", "+s.Pos+", "):
			out[s.Name] = cur + ", " + s.Pos
		}
	}
	return out, nil
}

// hasWhere reports whether any step row knows its call site.
func hasWhere(steps []stepJSON) bool {
	for _, s := range steps {
		if s.Where != "" {
			return true
		}
	}
	return false
}

// timelineHeader is the header of show's step table: with a WHERE column
// when the journal records call sites.
func timelineHeader(steps []stepJSON) []string {
	h := []string{"SEQ", "STEP", "STATUS", "ATTEMPT", "STARTED (UTC)", "DURATION"}
	if hasWhere(steps) {
		h = append(h, "WHERE")
	}
	return append(h, "RESULT / ERROR")
}
