package a

import "context"

// Replay is a workflow only the tests use: resumegen does not generate
// test files, so vet refuses it as resumegen does, and neither its body nor
// its call-site directive is checked further.
//
//resume:workflow // want `//resume:workflow in a _test.go file is not generated: move Replay to a non-test file of the package`
func Replay(ctx context.Context) error {
	go Step(ctx, 1)
	return Step(ctx, 2) //resume:step name=Two
}
