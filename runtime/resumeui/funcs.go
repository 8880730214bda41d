package resumeui

import (
	"html/template"

	"github.com/resumegen/resumegen/internal/termesc"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"add": func(a, b int) int { return a + b },
	// shown is a value from the journal as text a person reads: control
	// characters, bidi overrides and bytes that are not UTF-8 escaped
	// visibly (\u202e, \x1b, ...), as resumectl shows them, before
	// html/template escapes the markup. Ids in links and forms stay as
	// they are.
	"shown": termesc.String,
}
