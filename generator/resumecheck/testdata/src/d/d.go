// Package d holds identities, old versions and renames that the analyzer
// refuses as resumegen does.
package d

import "context"

/* want `workflow A's identity billing.Same is also the identity of workflow B` */ //resume:workflow name=billing.Same
func A(ctx context.Context) error                                                  { return S(ctx) }

/* want `workflow B's identity billing.Same is also the identity of workflow A` */ //resume:workflow name=billing.Same
func B(ctx context.Context) error                                                  { return S(ctx) }

/* want `aV1 has the same steps as A \(version [0-9a-f]{16}\): delete it` */ //resume:workflow old-version-of=A
func aV1(ctx context.Context) error                                          { return S(ctx) }

//resume:workflow
func C(ctx context.Context) error {
	return S(ctx) /* want `renamed-from=S: S is step S.s own name` */ //resume:step renamed-from=S
}

//resume:step
func S(ctx context.Context) error { return nil }
