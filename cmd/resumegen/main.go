// Command resumegen generates the durable form of Go workflows marked
// //resume:workflow: for each x.go holding workflows it writes x_resume.go
// beside it. Run it with //go:generate go tool resumegen.
//
// Usage:
//
//	resumegen [-check | -manifest | -graph] [packages]
//
// See package github.com/resumegen/resumegen/generator for what it
// generates and refuses.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
