package resumeui

import "html/template"

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"add": func(a, b int) int { return a + b },
}
