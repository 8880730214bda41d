package main

import "github.com/resumegen/resumegen/generator"

// Accessors of the generator's issue-12 fields (name=, old-version-of=,
// key=, renamed-from=), kept apart until the generator exports them.

func wfID(w *generator.Workflow) string          { return w.Package + "." + w.Name }
func wfAliases(w *generator.Workflow) []string   { return nil }
func wfOld(w *generator.Workflow) bool           { return false }
func stepKey(s *generator.Step) string           { return "" }
func stepRenamedFrom(s *generator.Step) []string { return nil }
