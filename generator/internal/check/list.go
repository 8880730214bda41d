package check

// All are the generator's checks, in the order they run. The order does
// not change what they find: diagnostics are sorted by position, and two
// at one position keep this order (a step's types before its placement).
var All = []*Check{
	Unreached,
	StepWaits,
	Signature,
	Predeclared,
	Nondeterministic,
	MapOrder,
	Concurrency,
	PackageState,
	StepTypes,
	StepRefs,
	Keys,
	Waits,
	Handles,
	Children,
	Placement,
	Names,
	HelperContext,
	Unfollowed,
	ErrorIdentities,
	OldVersions,
	Identities,
	Renames,
	GeneratedNames,
	NoSteps,
	Stale,
	LikelyRenames,
	Priors,
	UnboundedLoops,
}
